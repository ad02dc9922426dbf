#include "storage/block_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include "common/file_util.h"

namespace trainyard::storage {

BlockWriter::BlockWriter(int fd, std::filesystem::path path, ObjectHasher* hasher,
                         uint64_t start_offset)
    : fd_(fd),
      path_(std::move(path)),
      hasher_(hasher ? hasher : &own_hasher_),
      offset_(start_offset),
      worker_([this] { Run(); }) {}

BlockWriter::~BlockWriter() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

StatusOr<std::string> BlockWriter::Submit(std::string block) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !queued_.has_value() || !error_.ok(); });
  if (!error_.ok()) return error_;
  queued_ = std::move(block);
  std::string next = std::move(spare_);
  spare_.clear();
  lock.unlock();
  cv_.notify_all();
  next.clear();
  return next;
}

Status BlockWriter::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return (!queued_.has_value() && !busy_) || !error_.ok(); });
  return error_;
}

Status BlockWriter::Finish(std::string* md5_base64, std::string* crc32c_base64) {
  TY_RETURN_IF_ERROR(Wait());
  hasher_->Finish(md5_base64, crc32c_base64);  // the worker is idle and nothing is queued
  return Status::Ok();
}

void BlockWriter::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || queued_.has_value(); });
    if (stop_) return;
    std::string block = std::move(*queued_);
    queued_.reset();
    busy_ = true;
    lock.unlock();
    cv_.notify_all();  // Submit may queue the next block while this one is written
    hasher_->Update(block.data(), block.size());
    Status written = WriteAll(fd_, block, path_);
    if (written.ok()) {
      // Start writing these pages back now, without waiting: the final fsync then has little
      // left to do. Advisory; an error here shows up in that fsync.
      (void)::sync_file_range(fd_, static_cast<off_t>(offset_), static_cast<off_t>(block.size()),
                              SYNC_FILE_RANGE_WRITE);
      offset_ += block.size();
    }
    lock.lock();
    busy_ = false;
    if (!written.ok() && error_.ok()) error_ = written;
    spare_ = std::move(block);
    cv_.notify_all();
  }
}

}  // namespace trainyard::storage
