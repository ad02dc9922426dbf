// BlockWriter: hashes (MD5 + CRC32C) and writes an upload's blocks to its temp file on a thread
// of its own, so the request thread receives the next block meanwhile, and starts the kernel's
// writeback of each written block (sync_file_range), so the fsync before the object is committed
// waits for the last blocks only instead of the whole object. At most one block waits in the
// queue: memory stays at a few blocks per upload whatever the object's size.
//
// Thread-safety: Submit/Wait/Finish from one thread (the upload's); the worker is internal. An
// external hasher is the worker's between construction and the return of Wait or Finish.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/status.h"
#include "storage/object_hash.h"

namespace trainyard::storage {

class BlockWriter {
 public:
  // `fd` (not owned) is the temp file, written from its current offset, which is `start_offset`
  // (an O_APPEND file's size); `path` names it in errors. With `hasher` (not owned) the blocks
  // are hashed into it, continuing what it holds (a resumable upload's running hash); Finish is
  // then not for use, Wait is.
  BlockWriter(int fd, std::filesystem::path path, ObjectHasher* hasher = nullptr,
              uint64_t start_offset = 0);
  ~BlockWriter();  // stops the worker; blocks still queued are dropped (the upload is abandoned)
  BlockWriter(const BlockWriter&) = delete;
  BlockWriter& operator=(const BlockWriter&) = delete;

  // Queues `block` for hashing and writing and returns an empty buffer to fill next (a spent
  // block, to reuse its allocation). Waits while a block is already queued. The first write
  // error of an earlier block, if any (nothing more is written after one).
  StatusOr<std::string> Submit(std::string block);
  // Waits until every queued block is written and hashed; their first error.
  Status Wait();
  // Wait, then the base64 MD5 and CRC32C of all blocks (own hasher only). Call once, last.
  Status Finish(std::string* md5_base64, std::string* crc32c_base64);

 private:
  void Run();

  const int fd_;
  const std::filesystem::path path_;
  ObjectHasher own_hasher_;
  ObjectHasher* const hasher_;  // own_hasher_ or the caller's; the worker's only
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<std::string> queued_;  // the block waiting for the worker
  bool busy_ = false;                  // the worker is writing a block
  bool stop_ = false;
  Status error_;
  std::string spare_;  // a written block's buffer, handed back by Submit
  uint64_t offset_ = 0;
  std::thread worker_;
};

}  // namespace trainyard::storage
