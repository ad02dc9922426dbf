// Scalar summaries in TensorBoard's event-file format, for AIP_TENSORBOARD_LOG_DIR /
// --tensorboard-dir (Vertex's TensorBoard integration reads the same files).
//
// File "events.out.tfevents.<unix seconds>.<host>.<pid>": a sequence of TFRecords (u64 length,
// masked CRC32C of the length, payload, masked CRC32C of the payload) whose payloads are
// tensorflow.Event protos: first {wall_time, file_version: "brain.Event:2"}, then one
// {wall_time, step, summary {value {tag, simple_value}}} per scalar. Encoded by hand (a few
// protobuf fields) to avoid a protobuf dependency.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard::train {

class TensorBoardWriter {
 public:
  // Creates `dir` and a new event file in it.
  static StatusOr<TensorBoardWriter> Create(const std::filesystem::path& dir);

  void AddScalar(std::string_view tag, double value, int64_t step);
  // Pushes buffered events to the file (and disk).
  Status Flush();

  const std::filesystem::path& path() const { return path_; }

 private:
  TensorBoardWriter(std::filesystem::path path, std::FILE* file);
  void WriteRecord(const std::string& payload);

  std::filesystem::path path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
};

// TFRecord's masked CRC32C (common/crc32c.h) of `data`; exposed for tests.
uint32_t MaskedCrc32c(std::string_view data);

}  // namespace trainyard::train
