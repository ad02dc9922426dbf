// FsObjectStore::ListObjects: GCS listing semantics (lexicographic byte order of full names,
// prefix, delimiter roll-up into prefixes, start/end offsets, paging) over a directory walk.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "storage/fs_object_store.h"

namespace trainyard::storage {
namespace fs = std::filesystem;

namespace {

// The directory every name with `prefix` lives under: its part up to the last '/'.
std::string PrefixDir(const std::string& prefix) {
  size_t slash = prefix.rfind('/');
  return slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
}

bool HasAnyFile(const fs::path& dir) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) return true;
  }
  return false;
}

struct Entry {
  std::string key;  // object name, or a rolled-up prefix
  bool is_prefix = false;
};

// Adds the entry a file (or, with is_dir, a directory seen as "name/") stands for in the listing:
// nothing when outside the prefix or not a valid object name, its rolled-up prefix when the
// delimiter occurs after the prefix, else the object itself.
void Consider(const std::string& name, bool is_dir, const ListOptions& options,
              std::vector<Entry>* entries) {
  if (!name.starts_with(options.prefix)) return;
  std::string key = name;
  bool rolled = false;
  if (!options.delimiter.empty()) {
    size_t pos = name.find(options.delimiter, options.prefix.size());
    if (pos != std::string::npos) {
      key = name.substr(0, pos + options.delimiter.size());
      rolled = true;
    }
  }
  if (is_dir && !rolled) return;  // a directory is only ever seen through its objects
  if (!ValidateObjectName(rolled ? key.substr(0, key.size() - 1) : key).ok() && !rolled) return;
  entries->push_back({key, rolled});
}

// The entries under bucket_dir/base (base: the prefix's directory part), sorted and without
// duplicates.
StatusOr<std::vector<Entry>> CollectEntries(const fs::path& bucket_dir, const std::string& base,
                                            const ListOptions& options) {
  std::vector<Entry> entries;
  std::error_code ec;
  const fs::path start = bucket_dir / base;
  if (options.delimiter == "/") {
    // One directory level is enough: every deeper name rolls up into its subdirectory.
    for (const auto& e : fs::directory_iterator(start, ec)) {
      std::string name = base + e.path().filename().string();
      std::error_code ec2;
      if (e.is_directory(ec2)) {
        if (HasAnyFile(e.path())) Consider(name + "/", true, options, &entries);
      } else if (e.is_regular_file(ec2)) {
        Consider(name, false, options, &entries);
      }
    }
  } else {
    for (fs::recursive_directory_iterator it(start, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code ec2;
      if (!it->is_regular_file(ec2)) continue;
      Consider(base + fs::relative(it->path(), start).string(), false, options, &entries);
    }
  }
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    return IoError("cannot list " + start.string() + ": " + ec.message());
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.key != b.key ? a.key < b.key : a.is_prefix < b.is_prefix;
  });
  entries.erase(std::unique(entries.begin(), entries.end(),
                            [](const Entry& a, const Entry& b) {
                              return a.key == b.key && a.is_prefix == b.is_prefix;
                            }),
                entries.end());
  return entries;
}

}  // namespace

StatusOr<ListResult> FsObjectStore::ListObjects(const std::string& bucket,
                                                const ListOptions& options) {
  TY_RETURN_IF_ERROR(CheckBucket(bucket));
  const std::string base = PrefixDir(options.prefix);
  if (!base.empty() && !ValidateObjectName(base.substr(0, base.size() - 1)).ok()) {
    return ListResult{};  // no object can live under such a prefix
  }
  TY_ASSIGN_OR_RETURN(std::vector<Entry> entries, CollectEntries(BucketDir(bucket), base, options));

  ListResult out;
  int taken = 0;
  const int limit = options.max_results > 0 ? options.max_results : 1000;
  for (const Entry& e : entries) {
    if (!options.start_after.empty() && e.key <= options.start_after) continue;
    if (!options.start_offset.empty() && e.key < options.start_offset) continue;
    if (!options.end_offset.empty() && e.key >= options.end_offset) continue;
    if (taken == limit) {
      out.next_start_after = out.objects.empty() && out.prefixes.empty()
                                 ? ""
                                 : std::max(out.objects.empty() ? "" : out.objects.back().name,
                                            out.prefixes.empty() ? "" : out.prefixes.back());
      break;
    }
    ++taken;
    if (e.is_prefix) {
      out.prefixes.push_back(e.key);
      continue;
    }
    // Listing never hashes: hashes come from fresh sidecars only (Describe with want_hashes).
    int fd = ::open(DataPath(bucket, e.key).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // deleted meanwhile
    auto info = Describe(bucket, e.key, fd, /*want_hashes=*/false);
    ::close(fd);
    if (info.ok()) out.objects.push_back(std::move(info).value());
  }
  return out;
}

}  // namespace trainyard::storage
