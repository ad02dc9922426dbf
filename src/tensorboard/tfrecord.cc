#include "tensorboard/tfrecord.h"

#include <array>

namespace trainyard::tensorboard {
namespace {

constexpr size_t kHeaderBytes = 12;  // length + its CRC
constexpr size_t kFooterBytes = 4;   // payload CRC

uint64_t LoadLe(std::string_view bytes, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
  return v;
}

void AppendLe(std::string& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

}  // namespace

uint32_t Crc32c(std::string_view data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char ch : data) crc = table[(crc ^ ch) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u; }

std::string EncodeTfRecord(std::string_view payload) {
  std::string out;
  AppendLe(out, payload.size(), 8);
  AppendLe(out, MaskCrc32c(Crc32c(out)), 4);
  out.append(payload);
  AppendLe(out, MaskCrc32c(Crc32c(payload)), 4);
  return out;
}

TfRecordScan ScanTfRecords(std::string_view data) {
  TfRecordScan scan;
  size_t pos = 0;
  while (data.size() - pos >= kHeaderBytes) {
    const std::string_view header = data.substr(pos, 8);
    const auto length_crc = static_cast<uint32_t>(LoadLe(data.substr(pos + 8, 4), 4));
    if (MaskCrc32c(Crc32c(header)) != length_crc) {
      scan.error = "record at byte " + std::to_string(pos) +
                   ": length CRC mismatch (not a TFRecord file, or corrupted)";
      break;
    }
    const uint64_t length = LoadLe(header, 8);
    const uint64_t available = data.size() - pos - kHeaderBytes;
    if (length > available || available - length < kFooterBytes) {
      scan.pending_record_bytes = kHeaderBytes + length + kFooterBytes;
      break;
    }
    const std::string_view payload = data.substr(pos + kHeaderBytes, length);
    const auto payload_crc =
        static_cast<uint32_t>(LoadLe(data.substr(pos + kHeaderBytes + length, 4), 4));
    if (MaskCrc32c(Crc32c(payload)) == payload_crc) {
      scan.payloads.push_back(payload);
    } else {
      ++scan.corrupt_records;
    }
    pos += kHeaderBytes + length + kFooterBytes;
  }
  scan.consumed = pos;
  return scan;
}

}  // namespace trainyard::tensorboard
