// FsObjectStore's resumable upload sessions: ID.json (what is being uploaded) and ID.part (the
// bytes so far; its size is the persisted count) in .trainyard-uploads. Both survive a server
// restart, so a client can resume after one, as GCS allows for a week.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "common/file_util.h"
#include "storage/block_writer.h"
#include "storage/fs_object_store.h"
#include "storage/object_hash.h"

namespace trainyard::storage {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kUploadIoBlock = 1 << 20;

std::string NewSessionId() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

bool ValidSessionId(const std::string& id) {
  if (id.size() != 32) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

json SessionToJson(const UploadSession& s) {
  json j = {{"bucket", s.bucket}, {"name", s.name}, {"contentType", s.meta.content_type}};
  if (!s.meta.content_encoding.empty()) j["contentEncoding"] = s.meta.content_encoding;
  if (!s.meta.metadata.empty()) j["metadata"] = s.meta.metadata;
  if (s.total_size) j["totalSize"] = *s.total_size;
  if (s.pre.if_generation_match) j["ifGenerationMatch"] = *s.pre.if_generation_match;
  if (s.pre.if_generation_not_match) j["ifGenerationNotMatch"] = *s.pre.if_generation_not_match;
  return j;
}

UploadSession SessionFromJson(const std::string& id, const json& j) {
  UploadSession s;
  s.id = id;
  s.bucket = j.value("bucket", "");
  s.name = j.value("name", "");
  s.meta.content_type = j.value("contentType", "");
  s.meta.content_encoding = j.value("contentEncoding", "");
  s.meta.metadata = j.value("metadata", std::map<std::string, std::string>{});
  if (j.contains("totalSize")) s.total_size = j["totalSize"].get<uint64_t>();
  if (j.contains("ifGenerationMatch")) s.pre.if_generation_match = j["ifGenerationMatch"];
  if (j.contains("ifGenerationNotMatch")) s.pre.if_generation_not_match = j["ifGenerationNotMatch"];
  return s;
}

Status SessionNotFound(const std::string& id) {
  return NotFoundError("No such upload session: " + id +
                       " (it was finished, cancelled or expired; start a new upload)");
}

}  // namespace

// The store's own directories: made by and for the server alone. One that is not a directory,
// is a link, or belongs to another user was made by someone else (a replica can create entries in
// a group-writable bucket root): it is removed, never trusted, and made anew.
Status FsObjectStore::OpenDirs(const fs::path& root) {
  TY_RETURN_IF_ERROR(MakeDirs(root));
  TY_ASSIGN_OR_RETURN(root_, BeneathDir::Open(root));
  for (auto [name, dir] : {std::pair{".trainyard-meta", &meta_}, std::pair{".trainyard-tmp", &tmp_},
                           std::pair{".trainyard-uploads", &uploads_}}) {
    auto st = root_.Stat(name);
    if (st.ok() && (!S_ISDIR(st->st_mode) || st->st_uid != ::geteuid())) {
      TY_RETURN_IF_ERROR(root_.RemoveAll(name));
    }
    TY_ASSIGN_OR_RETURN(*dir, root_.MakeDirs(name, 0700));
    // Made 0775 by earlier versions (under the umask 002 of shared buckets).
    if (::fchmod(dir->fd(), 0700) != 0) {
      return IoError(std::string("cannot chmod the store's directory ") + name + ": " +
                     std::strerror(errno));
    }
  }
  return Status::Ok();
}

StatusOr<std::string> FsObjectStore::TempFileName() { return "w-" + NewSessionId(); }

StatusOr<std::unique_ptr<FsObjectStore>> FsObjectStore::Open(const fs::path& root,
                                                             FsObjectStoreOptions options) {
  std::unique_ptr<FsObjectStore> store(new FsObjectStore(options));
  TY_RETURN_IF_ERROR(store->OpenDirs(root));
  // Leftovers of writers that died before committing, and expired sessions.
  if (auto entries = store->tmp_.List(); entries.ok()) {
    for (const BeneathDir::Entry& e : *entries) (void)store->tmp_.RemoveAll(e.name);
  }
  const auto cutoff = std::chrono::system_clock::now() - options.session_lifetime;
  if (auto entries = store->uploads_.List(); entries.ok()) {
    for (const BeneathDir::Entry& e : *entries) {
      auto st = store->uploads_.Stat(e.name);
      if (!st.ok()) continue;
      const auto mtime = std::chrono::system_clock::from_time_t(st->st_mtim.tv_sec);
      if (mtime < cutoff) (void)store->uploads_.RemoveAll(e.name);
    }
  }
  return store;
}

std::mutex& FsObjectStore::SessionMutex(const std::string& id) {
  return session_mu_[std::hash<std::string>{}(id) % session_mu_.size()];
}

Status FsObjectStore::SaveSession(const UploadSession& session) {
  return uploads_.ReplaceFile(SessionName(session.id, ".json"), SessionToJson(session).dump(),
                              /*durable=*/true, 0600);
}

StatusOr<UploadSession> FsObjectStore::StartUpload(UploadSession session) {
  TY_RETURN_IF_ERROR(CheckBucket(session.bucket));
  TY_RETURN_IF_ERROR(ValidateObjectName(session.name));
  session.id = NewSessionId();
  session.persisted = 0;
  auto part =
      uploads_.OpenFile(SessionName(session.id, ".part"), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (!part.ok()) {
    return IoError("cannot create an upload session file: " + part.status().message());
  }
  if (Status s = SaveSession(session); !s.ok()) {
    (void)uploads_.Unlink(SessionName(session.id, ".part"));
    return s;
  }
  std::lock_guard lock(sessions_mu_);
  live_hashes_[session.id] = std::make_unique<LiveHash>();
  return session;
}

StatusOr<UploadSession> FsObjectStore::GetUpload(const std::string& id) {
  if (!ValidSessionId(id)) return SessionNotFound(id);
  // A session file is small: its metadata is bounded by the request size.
  auto text = uploads_.ReadFile(SessionName(id, ".json"), 4 << 20);
  if (!text.ok()) return SessionNotFound(id);
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object()) return DataLossError("corrupt upload session " + id);
  UploadSession s = SessionFromJson(id, j);
  s.finished = j.value("finished", false);
  if (s.finished) return s;
  auto st = uploads_.Stat(SessionName(id, ".part"));
  if (!st.ok() || !S_ISREG(st->st_mode)) return SessionNotFound(id);
  s.persisted = static_cast<uint64_t>(st->st_size);
  return s;
}

StatusOr<UploadSession> FsObjectStore::AppendUpload(const std::string& id, uint64_t offset,
                                                    const std::function<bool(ChunkSink)>& read) {
  std::lock_guard session_lock(SessionMutex(id));
  TY_ASSIGN_OR_RETURN(UploadSession s, GetUpload(id));
  if (s.finished) return FailedPreconditionError("the upload " + id + " is already finished");
  if (offset > s.persisted) {
    return OutOfRangeError("Content-Range starts at byte " + std::to_string(offset) +
                           " but the session holds only " + std::to_string(s.persisted) +
                           " bytes; query the upload status and resume from there");
  }
  const fs::path part = SessionName(id, ".part");
  auto opened = uploads_.OpenFile(part.string(), O_WRONLY | O_APPEND);
  if (!opened.ok()) {
    return IoError("cannot open upload session " + id + ": " + opened.status().message());
  }
  const int fd = opened->release();
  LiveHash* live = nullptr;
  {
    std::lock_guard lock(sessions_mu_);
    auto it = live_hashes_.find(id);
    if (it != live_hashes_.end() && it->second->hasher.bytes() == s.persisted)
      live = it->second.get();
  }
  uint64_t skip = s.persisted - offset;  // bytes the client resends that are already stored
  uint64_t appended = 0;
  bool too_long = false;
  Status write_status;
  // Hashes (into the session's running hash) and writes each block on a thread of its own while
  // this one receives the next, as whole-object uploads do (block_writer.h).
  auto blocks =
      std::make_unique<BlockWriter>(fd, part, live ? &live->hasher : nullptr, s.persisted);
  std::string buffer;
  buffer.reserve(kUploadIoBlock);
  auto flush = [&] {
    if (buffer.empty() || !write_status.ok()) return;
    auto next = blocks->Submit(std::move(buffer));
    if (next.ok()) {
      buffer = std::move(next).value();
      if (buffer.capacity() < kUploadIoBlock) buffer.reserve(kUploadIoBlock);
    } else {
      write_status = next.status();
      buffer.clear();
    }
  };
  const bool read_ok = read([&](const char* data, size_t n) {
    if (skip > 0) {
      size_t dropped = static_cast<size_t>(std::min<uint64_t>(skip, n));
      skip -= dropped;
      data += dropped;
      n -= dropped;
    }
    appended += n;
    if (s.total_size && s.persisted + appended > *s.total_size) {
      too_long = true;
      return false;
    }
    buffer.append(data, n);
    if (buffer.size() >= kUploadIoBlock) flush();
    return write_status.ok();
  });
  flush();
  if (Status waited = blocks->Wait(); write_status.ok()) write_status = waited;
  blocks.reset();  // the worker is done with fd and the running hash
  if (!read_ok || too_long || !write_status.ok()) {
    // Roll back to what the session held: a chunk is stored whole or not at all.
    (void)::ftruncate(fd, static_cast<off_t>(s.persisted));
    ::close(fd);
    std::lock_guard lock(sessions_mu_);
    live_hashes_.erase(id);
    if (too_long) {
      return OutOfRangeError("the upload is longer than its declared total of " +
                             std::to_string(*s.total_size) + " bytes");
    }
    if (!write_status.ok()) return write_status;
    return InvalidArgumentError("the chunk was not received completely; nothing of it was kept");
  }
  ::close(fd);
  s.persisted += appended;
  return s;
}

StatusOr<ObjectInfo> FsObjectStore::FinishUpload(const std::string& id) {
  std::lock_guard session_lock(SessionMutex(id));
  TY_ASSIGN_OR_RETURN(UploadSession s, GetUpload(id));
  if (s.finished) return GetObject(s.bucket, s.name);
  if (s.total_size && *s.total_size != s.persisted) {
    return FailedPreconditionError("the upload holds " + std::to_string(s.persisted) +
                                   " bytes, not its declared total of " +
                                   std::to_string(*s.total_size));
  }
  const std::string part = SessionName(id, ".part");
  auto opened = uploads_.OpenFile(part, O_RDWR);
  if (!opened.ok()) {
    return IoError("cannot open upload session " + id + ": " + opened.status().message());
  }
  const int fd = opened->release();
  std::unique_ptr<LiveHash> live;
  {
    std::lock_guard lock(sessions_mu_);
    auto it = live_hashes_.find(id);
    if (it != live_hashes_.end()) {
      live = std::move(it->second);
      live_hashes_.erase(it);
    }
  }
  if (!live || live->hasher.bytes() != s.persisted) {
    live = std::make_unique<LiveHash>();
    std::string buf(kUploadIoBlock, '\0');
    for (uint64_t off = 0; off < s.persisted;) {
      ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(off));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd);
        return IoError("cannot read upload session " + id + ": " + strerror(errno));
      }
      live->hasher.Update(buf.data(), static_cast<size_t>(n));
      off += static_cast<uint64_t>(n);
    }
  }
  std::string md5, crc;
  live->hasher.Finish(&md5, &crc);
  auto info = CommitFile(uploads_, part, fd, s.bucket, s.name, s.meta, s.pre, md5, crc);
  ::close(fd);
  if (info.ok()) {
    // Kept as a tombstone so a client that lost the final response can query it (GCS answers
    // such a status query with the object).
    json done = SessionToJson(s);
    done["finished"] = true;
    (void)uploads_.ReplaceFile(SessionName(id, ".json"), done.dump(), /*durable=*/false, 0600);
  } else if (info.status().code() == StatusCode::kAborted) {
    // A failed precondition ends the session, as on GCS.
    (void)uploads_.Unlink(SessionName(id, ".json"));
    (void)uploads_.Unlink(part);
  }
  return info;
}

Status FsObjectStore::CancelUpload(const std::string& id) {
  if (!ValidSessionId(id)) return SessionNotFound(id);
  // After an append or finish in flight: they use the session's running hash unlocked.
  std::lock_guard session_lock(SessionMutex(id));
  bool existed = uploads_.Unlink(SessionName(id, ".json")).ok();
  (void)uploads_.Unlink(SessionName(id, ".part"));
  std::lock_guard lock(sessions_mu_);
  live_hashes_.erase(id);
  return existed ? Status::Ok() : SessionNotFound(id);
}

}  // namespace trainyard::storage
