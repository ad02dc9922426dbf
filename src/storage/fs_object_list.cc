// FsObjectStore::ListObjects: GCS listing semantics (lexicographic byte order of full names,
// prefix, delimiter roll-up into prefixes, start/end offsets, paging) over a directory walk.
#include <sys/stat.h>

#include <algorithm>

#include "storage/fs_object_store.h"

namespace trainyard::storage {
namespace fs = std::filesystem;

namespace {

// The directory every name with `prefix` lives under: its part up to the last '/'.
std::string PrefixDir(const std::string& prefix) {
  size_t slash = prefix.rfind('/');
  return slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
}

// Whether the directory `dir` holds a regular file at any depth (links are not followed and do
// not count).
bool HasAnyFile(const BeneathDir& dir, int depth = 0) {
  if (depth > BeneathDir::kMaxDepth) return false;
  auto entries = dir.List();
  if (!entries.ok()) return false;
  for (const BeneathDir::Entry& e : *entries) {
    if (e.type == S_IFREG) return true;
  }
  for (const BeneathDir::Entry& e : *entries) {
    if (e.type != S_IFDIR) continue;
    auto sub = dir.OpenDir(e.name);
    if (sub.ok() && HasAnyFile(*sub, depth + 1)) return true;
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

// Adds the regular files beneath `dir` (named `base` + their relative names) to `entries`,
// walking subdirectories through their fds: links are never followed, also not one swapped in for
// a directory during the walk.
void CollectFlat(const BeneathDir& dir, const std::string& base, const ListOptions& options,
                 std::vector<Entry>* entries, int depth) {
  if (depth > BeneathDir::kMaxDepth) return;
  auto listed = dir.List();
  if (!listed.ok()) return;
  for (const BeneathDir::Entry& e : *listed) {
    if (e.type == S_IFREG) {
      Consider(base + e.name, false, options, entries);
    } else if (e.type == S_IFDIR) {
      const std::string sub_base = base + e.name + "/";
      // Names below sort after the prefix only when they can still match it.
      if (!sub_base.starts_with(options.prefix) && !options.prefix.starts_with(sub_base)) continue;
      auto sub = dir.OpenDir(e.name);
      if (sub.ok()) CollectFlat(*sub, sub_base, options, entries, depth + 1);
    }
  }
}

// The entries under the bucket's directory `base` (base: the prefix's directory part), sorted
// and without duplicates.
StatusOr<std::vector<Entry>> CollectEntries(const BeneathDir& bucket_dir, const std::string& base,
                                            const ListOptions& options) {
  std::vector<Entry> entries;
  auto start = bucket_dir.OpenDir(base.empty() ? "" : base.substr(0, base.size() - 1));
  if (!start.ok()) {
    // A missing directory or a link in the way holds no objects.
    if (start.status().code() == StatusCode::kNotFound ||
        start.status().code() == StatusCode::kFailedPrecondition) {
      return entries;
    }
    return IoError("cannot list " + base + ": " + start.status().message());
  }
  if (options.delimiter == "/") {
    // One directory level is enough: every deeper name rolls up into its subdirectory.
    auto listed = start->List();
    if (!listed.ok()) return IoError("cannot list " + base + ": " + listed.status().message());
    for (const BeneathDir::Entry& e : *listed) {
      const std::string name = base + e.name;
      if (e.type == S_IFDIR) {
        auto sub = start->OpenDir(e.name);
        if (sub.ok() && HasAnyFile(*sub)) Consider(name + "/", true, options, &entries);
      } else if (e.type == S_IFREG) {
        Consider(name, false, options, &entries);
      }
    }
  } else {
    CollectFlat(*start, base, options, &entries, 0);
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
  TY_ASSIGN_OR_RETURN(BeneathDir bucket_dir, root_.OpenDir(bucket));
  TY_ASSIGN_OR_RETURN(std::vector<Entry> entries, CollectEntries(bucket_dir, base, options));

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
    auto fd = bucket_dir.OpenRegular(e.key);
    if (!fd.ok()) continue;  // deleted (or swapped for a link) meanwhile
    auto info = Describe(bucket, e.key, fd->get(), /*want_hashes=*/false);
    if (info.ok()) out.objects.push_back(std::move(info).value());
  }
  return out;
}

}  // namespace trainyard::storage
