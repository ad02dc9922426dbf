#include "tensorboard/proto_wire.h"

#include <cstring>

namespace trainyard::tensorboard {

Status ProtoReader::Truncated(const char* what) const {
  return InvalidArgumentError(std::string("protobuf: truncated ") + what + " at byte " +
                              std::to_string(pos_) + " of " + std::to_string(data_.size()));
}

StatusOr<uint64_t> ProtoReader::ReadVarint() {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size()) return Truncated("varint");
    const auto byte = static_cast<uint8_t>(data_[pos_++]);
    value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return InvalidArgumentError("protobuf: varint longer than 10 bytes at byte " +
                              std::to_string(pos_));
}

StatusOr<FieldTag> ProtoReader::ReadTag() {
  TY_ASSIGN_OR_RETURN(uint64_t key, ReadVarint());
  const uint64_t type = key & 7;
  const uint64_t number = key >> 3;
  if (number == 0 || number > 0x1FFFFFFF) {
    return InvalidArgumentError("protobuf: invalid field number " + std::to_string(number) +
                                " at byte " + std::to_string(pos_));
  }
  if (type > 5) {
    return InvalidArgumentError("protobuf: invalid wire type " + std::to_string(type) +
                                " at byte " + std::to_string(pos_));
  }
  return FieldTag{static_cast<uint32_t>(number), static_cast<WireType>(type)};
}

StatusOr<uint64_t> ProtoReader::ReadFixed64() {
  if (data_.size() - pos_ < 8) return Truncated("fixed64");
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + i]);
  pos_ += 8;
  return v;
}

StatusOr<uint32_t> ProtoReader::ReadFixed32() {
  if (data_.size() - pos_ < 4) return Truncated("fixed32");
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + i]);
  pos_ += 4;
  return v;
}

StatusOr<std::string_view> ProtoReader::ReadBytes() {
  TY_ASSIGN_OR_RETURN(uint64_t length, ReadVarint());
  if (length > data_.size() - pos_) return Truncated("length-delimited field");
  std::string_view out = data_.substr(pos_, length);
  pos_ += length;
  return out;
}

Status ProtoReader::Skip(WireType type) {
  switch (type) {
    case WireType::kVarint:
      return ReadVarint().status();
    case WireType::kFixed64:
      return ReadFixed64().status();
    case WireType::kFixed32:
      return ReadFixed32().status();
    case WireType::kLengthDelimited:
      return ReadBytes().status();
    case WireType::kStartGroup: {
      // Iterative, with protobuf's nesting limit: a file of nested groups must not recurse the
      // reader off its stack (found by fuzz/tensorboard_fuzzer).
      int depth = 1;
      while (depth > 0) {
        if (done()) return Truncated("group");
        TY_ASSIGN_OR_RETURN(FieldTag tag, ReadTag());
        if (tag.type == WireType::kStartGroup) {
          if (++depth > 100) {
            return InvalidArgumentError("protobuf: groups nested deeper than 100 at byte " +
                                        std::to_string(pos_));
          }
        } else if (tag.type == WireType::kEndGroup) {
          --depth;
        } else {
          TY_RETURN_IF_ERROR(Skip(tag.type));
        }
      }
      return Status::Ok();
    }
    case WireType::kEndGroup:
      return InvalidArgumentError("protobuf: unexpected end-group tag at byte " +
                                  std::to_string(pos_));
  }
  return InvalidArgumentError("protobuf: invalid wire type");
}

double Fixed64ToDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

float Fixed32ToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

}  // namespace trainyard::tensorboard
