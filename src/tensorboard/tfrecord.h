// TFRecord framing, as TensorFlow's and TensorBoard's event writers produce it:
//
//   uint64 length (little-endian)
//   uint32 masked CRC32C of the 8 length bytes
//   byte   payload[length]
//   uint32 masked CRC32C of the payload
//
// masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8. Event files are appended to while a
// job runs, so a scan stops before an incomplete last record and reports how far it got; the
// caller resumes from there once the file has grown.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainyard::tensorboard {

// CRC32C (Castagnoli polynomial, reflected 0x82F63B78) and TFRecord's masking of it.
uint32_t Crc32c(std::string_view data);
uint32_t MaskCrc32c(uint32_t crc);

// Frames `payload` as one TFRecord (for tests and tools that write event files).
std::string EncodeTfRecord(std::string_view payload);

struct TfRecordScan {
  // Payloads of the complete records whose CRCs match, in file order (views into the scanned
  // buffer).
  std::vector<std::string_view> payloads;
  // Bytes of the buffer covered by complete records (good or skipped); resume from here.
  size_t consumed = 0;
  // Complete records whose payload CRC did not match; they are skipped (their length was
  // trustworthy, so the records after them are still found).
  int corrupt_records = 0;
  // Non-empty when the scan stopped at `consumed` because a length's CRC does not match: the
  // framing is lost and nothing after that point can be read. Empty when it stopped only because
  // the buffer ended (the last record may still be being written).
  std::string error;
  // Length of the record starting at `consumed` when only part of it is in the buffer (0 when
  // not even its 12-byte header is): lets a reader with a bounded buffer read enough next time.
  uint64_t pending_record_bytes = 0;
};

// Scans the records in `data`, which starts at a record boundary.
TfRecordScan ScanTfRecords(std::string_view data);

}  // namespace trainyard::tensorboard
