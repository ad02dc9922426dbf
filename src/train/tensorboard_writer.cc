#include "train/tensorboard_writer.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>

#include "common/crc32c.h"
#include "common/file_util.h"

namespace trainyard::train {
namespace {

double WallTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

template <typename T>
void PutFixed(std::string& out, T v) {  // little-endian host (x86-64, aarch64)
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out.append(bytes, sizeof(T));
}

void PutLengthDelimited(std::string& out, int field, std::string_view bytes) {
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | 2);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

}  // namespace

uint32_t MaskedCrc32c(std::string_view data) {
  const uint32_t crc = Crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

TensorBoardWriter::TensorBoardWriter(std::filesystem::path path, std::FILE* file)
    : path_(std::move(path)), file_(file, &std::fclose) {}

StatusOr<TensorBoardWriter> TensorBoardWriter::Create(const std::filesystem::path& dir) {
  TY_RETURN_IF_ERROR(MakeDirs(dir).WithPrefix("--tensorboard-dir"));
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  const std::string name = "events.out.tfevents." +
                           std::to_string(static_cast<int64_t>(WallTime())) + "." + host + "." +
                           std::to_string(getpid());
  const std::filesystem::path path = dir / name;
  std::FILE* file = std::fopen(path.c_str(), "ab");
  if (!file) return IoError("--tensorboard-dir: cannot create " + path.string());
  TensorBoardWriter writer(path, file);
  std::string event;
  PutVarint(event, (1 << 3) | 1);  // wall_time: double
  PutFixed(event, WallTime());
  PutLengthDelimited(event, 3, "brain.Event:2");  // file_version
  writer.WriteRecord(event);
  TY_RETURN_IF_ERROR(writer.Flush());
  return writer;
}

void TensorBoardWriter::AddScalar(std::string_view tag, double value, int64_t step) {
  std::string summary_value;
  PutLengthDelimited(summary_value, 1, tag);  // Summary.Value.tag
  PutVarint(summary_value, (2 << 3) | 5);     // Summary.Value.simple_value: float
  PutFixed(summary_value, static_cast<float>(value));
  std::string summary;
  PutLengthDelimited(summary, 1, summary_value);  // Summary.value
  std::string event;
  PutVarint(event, (1 << 3) | 1);
  PutFixed(event, WallTime());
  PutVarint(event, 2 << 3);  // step: int64 varint
  PutVarint(event, static_cast<uint64_t>(step));
  PutLengthDelimited(event, 5, summary);  // Event.summary
  WriteRecord(event);
}

void TensorBoardWriter::WriteRecord(const std::string& payload) {
  std::string header;
  PutFixed(header, static_cast<uint64_t>(payload.size()));
  std::string record = header;
  PutFixed(record, MaskedCrc32c(header));
  record += payload;
  PutFixed(record, MaskedCrc32c(payload));
  std::fwrite(record.data(), 1, record.size(), file_.get());
}

Status TensorBoardWriter::Flush() {
  if (std::fflush(file_.get()) != 0) return IoError("cannot write " + path_.string());
  fsync(fileno(file_.get()));
  return Status::Ok();
}

}  // namespace trainyard::train
