// A reader of the protobuf binary wire format, enough to decode TensorBoard's Event/Summary
// messages without a protobuf dependency (the fields used are listed in event_decoder.h).
//
// Every read checks bounds: malformed input yields a Status naming what was wrong and where,
// never a read past the end of the buffer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard::tensorboard {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

struct FieldTag {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
};

// Reads one message's fields in order. The buffer must outlive the reader and the views it
// returns.
class ProtoReader {
 public:
  explicit ProtoReader(std::string_view data) : data_(data) {}

  bool done() const { return pos_ >= data_.size(); }
  size_t position() const { return pos_; }

  // The next field's number and wire type. INVALID_ARGUMENT for field number 0 or an unknown
  // wire type.
  StatusOr<FieldTag> ReadTag();
  StatusOr<uint64_t> ReadVarint();
  StatusOr<uint64_t> ReadFixed64();
  StatusOr<uint32_t> ReadFixed32();
  // A length-delimited field's bytes (a string, bytes, sub-message or packed repeated field).
  StatusOr<std::string_view> ReadBytes();
  // Skips the value of a field of type `type` (groups are skipped up to their end tag, nested at
  // most 100 deep: INVALID_ARGUMENT beyond).
  Status Skip(WireType type);

 private:
  Status Truncated(const char* what) const;

  std::string_view data_;
  size_t pos_ = 0;
};

double Fixed64ToDouble(uint64_t bits);
float Fixed32ToFloat(uint32_t bits);

}  // namespace trainyard::tensorboard
