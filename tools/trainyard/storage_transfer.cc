#include "storage_transfer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/bucket_path.h"
#include "common/file_util.h"
#include "common/url_encode.h"

namespace trainyard::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string BucketPath(const std::string& bucket) { return "/storage/v1/b/" + bucket; }
std::string ObjectPath(const std::string& bucket, const std::string& name) {
  return BucketPath(bucket) + "/o/" + UrlEncode(name);
}

// A source or destination as typed: a local path, or gs://BUCKET[/OBJECT].
struct Location {
  bool gcs = false;
  fs::path local;
  std::string bucket;
  std::string object;  // "" = the bucket itself; may end with '/' (a folder)
  std::string text;

  // The object or path `rel` (a '/'-separated relative name) below this one.
  Location Below(const std::string& rel) const {
    Location out = *this;
    if (!gcs) {
      out.local = local / rel;
      out.text = out.local.string();
      return out;
    }
    std::string base = object;
    if (!base.empty() && base.back() != '/') base += '/';
    out.object = base + rel;
    out.text = "gs://" + bucket + "/" + out.object;
    return out;
  }
};

StatusOr<Location> ParseLocation(const std::string& text) {
  Location l;
  l.text = text;
  if (!IsGcsUri(text)) {
    l.local = text;
    return l;
  }
  l.gcs = true;
  TY_ASSIGN_OR_RETURN(GcsUri uri, ParseGcsUri(text));
  l.bucket = std::move(uri.bucket);
  l.object = std::move(uri.object);
  return l;
}

struct Listing {
  std::vector<std::string> names;     // objects
  std::vector<std::string> prefixes;  // folders, with `folders`
};

// The objects under `prefix` (and with `folders`, the folders one level down), every page, or
// the first page only once it holds `enough` names.
StatusOr<Listing> List(ApiClient& api, const std::string& bucket, const std::string& prefix,
                       bool folders, size_t enough = SIZE_MAX) {
  Listing out;
  std::string token;
  do {
    std::string path = BucketPath(bucket) + "/o?prefix=" + UrlEncode(prefix);
    if (folders) path += "&delimiter=%2F";
    if (!token.empty()) path += "&pageToken=" + UrlEncode(token);
    TY_ASSIGN_OR_RETURN(json page, api.Call("GET", path));
    for (const json& o : page.value("items", json::array())) {
      if (o.is_object() && o.contains("name") && o["name"].is_string()) {
        out.names.push_back(o["name"]);
      }
    }
    for (const json& p : page.value("prefixes", json::array())) {
      if (p.is_string()) out.prefixes.push_back(p);
    }
    token = page.value("nextPageToken", "");
  } while (!token.empty() && out.names.size() + out.prefixes.size() < enough);
  return out;
}

StatusOr<bool> ObjectExists(ApiClient& api, const std::string& bucket, const std::string& name) {
  if (name.empty() || name.back() == '/') return false;
  StatusOr<json> got = api.Call("GET", ObjectPath(bucket, name));
  if (got.ok()) return true;
  if (got.status().code() == StatusCode::kNotFound) return false;
  return got.status();
}

// The last segment of a path or object name, without trailing slashes ("" for none).
std::string LastSegment(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  const size_t slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

// One file to copy, and its name relative to the destination folder.
struct Item {
  Location from;
  std::string rel;
};

// The files of a local source.
StatusOr<std::vector<Item>> ExpandLocal(const Location& src, bool recursive, bool* folder) {
  std::error_code ec;
  const fs::file_status st = fs::status(src.local, ec);
  if (!fs::exists(st)) return NotFoundError("'" + src.text + "' does not exist");
  if (!fs::is_directory(st)) {
    if (!fs::is_regular_file(st)) {
      return InvalidArgumentError("'" + src.text + "' is not a regular file");
    }
    return std::vector<Item>{{src, src.local.filename().string()}};
  }
  if (!recursive) {
    return InvalidArgumentError("'" + src.text +
                                "' is a directory; use --recursive (-r) to copy it");
  }
  fs::path abs = fs::absolute(src.local).lexically_normal();
  if (abs.filename().empty()) abs = abs.parent_path();
  const std::string name = abs.filename().string();
  std::vector<Item> items;
  for (auto it = fs::recursive_directory_iterator(src.local, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    Location file = src;
    file.local = it->path();
    file.text = it->path().string();
    items.push_back({file, name + "/" + fs::relative(it->path(), src.local).generic_string()});
  }
  if (ec) return IoError("cannot list '" + src.text + "': " + ec.message());
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.rel < b.rel; });
  *folder = true;
  return items;
}

// The objects of a gs:// source: the object it names, else what its folder holds.
StatusOr<std::vector<Item>> ExpandGcs(ApiClient& api, const Location& src, bool recursive,
                                      bool* folder) {
  TY_RETURN_IF_ERROR(CheckServerBucket(api, src.bucket));
  TY_ASSIGN_OR_RETURN(bool object, ObjectExists(api, src.bucket, src.object));
  if (object) return std::vector<Item>{{src, LastSegment(src.object)}};
  std::string prefix = src.object;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  TY_ASSIGN_OR_RETURN(Listing listing, List(api, src.bucket, prefix, /*folders=*/false));
  if (listing.names.empty()) {
    return NotFoundError("'" + src.text + "' matched no objects");
  }
  if (!recursive) {
    return InvalidArgumentError("'" + src.text + "' is a folder of " +
                                std::to_string(listing.names.size()) +
                                " object(s); use --recursive (-r) to copy it");
  }
  const std::string name = prefix.empty() ? src.bucket : LastSegment(prefix);
  std::vector<Item> items;
  for (const std::string& object : listing.names) {
    if (object.back() == '/') continue;  // a folder placeholder
    Location from = src;
    from.object = object;
    from.text = "gs://" + src.bucket + "/" + object;
    items.push_back({from, name + "/" + object.substr(prefix.size())});
  }
  *folder = true;
  return items;
}

StatusOr<bool> DestinationIsFolder(ApiClient& api, const Location& dst, bool several) {
  if (several || dst.text.ends_with("/")) return true;
  if (!dst.gcs) {
    std::error_code ec;
    return fs::is_directory(dst.local, ec);
  }
  if (dst.object.empty()) return true;
  TY_ASSIGN_OR_RETURN(Listing l, List(api, dst.bucket, dst.object + "/", false, /*enough=*/1));
  return !l.names.empty();
}

std::string ContentTypeFor(const std::string& name) {
  static const std::map<std::string, std::string> kTypes = {
      {".csv", "text/csv"},          {".json", "application/json"}, {".txt", "text/plain"},
      {".yaml", "application/yaml"}, {".yml", "application/yaml"},  {".py", "text/x-python"},
      {".gz", "application/gzip"},   {".tar", "application/x-tar"}, {".zip", "application/zip"},
      {".html", "text/html"}};
  auto it = kTypes.find(fs::path(name).extension().string());
  return it == kTypes.end() ? "application/octet-stream" : it->second;
}

// Writes `dst` through a temp file beside it, filled by `fill`, fsynced and renamed into place:
// a reader (or a crash) never sees half a file.
Status WriteLocalAtomic(const fs::path& dst, const std::function<Status(std::ofstream&)>& fill) {
  if (dst.has_parent_path()) TY_RETURN_IF_ERROR(MakeDirs(dst.parent_path()));
  fs::path tmp = dst;
  tmp += ".tmp." + std::to_string(::getpid());
  Status filled;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError("cannot write " + tmp.string());
    filled = fill(out);
    out.flush();
    if (filled.ok() && !out) filled = IoError("write failed for " + tmp.string() + " (disk full?)");
  }
  if (filled.ok()) filled = FsyncPath(tmp);
  std::error_code ec;
  if (filled.ok()) {
    fs::rename(tmp, dst, ec);
    if (ec) filled = IoError("cannot write " + dst.string() + ": " + ec.message());
  }
  if (!filled.ok()) {
    fs::remove(tmp, ec);
    return filled;
  }
  return FsyncPath(dst.has_parent_path() ? dst.parent_path() : fs::path("."));
}

Status CopyOne(ApiClient& api, const Location& from, const Location& to) {
  if (!from.gcs && !to.gcs) {
    return WriteLocalAtomic(to.local, [&](std::ofstream& out) {
      std::ifstream in(from.local, std::ios::binary);
      if (!in) return NotFoundError("cannot read " + from.text);
      out << in.rdbuf();
      return Status::Ok();
    });
  }
  if (!from.gcs) {
    return api
        .Upload("/upload/storage/v1/b/" + to.bucket +
                    "/o?uploadType=media&name=" + UrlEncode(to.object),
                from.local, ContentTypeFor(to.object))
        .status();
  }
  if (to.gcs) {
    return api
        .Call("POST",
              ObjectPath(from.bucket, from.object) + "/copyTo/b/" + to.bucket + "/o/" +
                  UrlEncode(to.object),
              "{}")
        .status();
  }
  return WriteLocalAtomic(to.local, [&](std::ofstream& out) {
    return api.Download(ObjectPath(from.bucket, from.object) + "?alt=media",
                        [&](const char* data, size_t n) {
                          out.write(data, static_cast<std::streamsize>(n));
                          return static_cast<bool>(out);
                        });
  });
}

}  // namespace

Status CheckServerBucket(ApiClient& api, const std::string& bucket) {
  StatusOr<json> got = api.Call("GET", BucketPath(bucket));
  if (got.ok()) return Status::Ok();
  if (got.status().code() != StatusCode::kNotFound) return got.status();
  return MissingBucketError(bucket,
                            "gs://" + bucket + " (on the server at " + api.endpoint() + ")");
}

Status CopyObjects(ApiClient& api, const CopyRequest& request, std::ostream& progress) {
  if (request.sources.empty() || request.destination.empty()) {
    return InvalidArgumentError("storage cp: give at least one SOURCE and a DESTINATION");
  }
  TY_ASSIGN_OR_RETURN(Location dst, ParseLocation(request.destination));
  if (dst.gcs) TY_RETURN_IF_ERROR(CheckServerBucket(api, dst.bucket));
  TY_ASSIGN_OR_RETURN(bool into_folder, DestinationIsFolder(api, dst, request.sources.size() > 1));
  for (const std::string& text : request.sources) {
    TY_ASSIGN_OR_RETURN(Location src, ParseLocation(text));
    bool folder = false;
    TY_ASSIGN_OR_RETURN(std::vector<Item> items,
                        src.gcs ? ExpandGcs(api, src, request.recursive, &folder)
                                : ExpandLocal(src, request.recursive, &folder));
    for (const Item& item : items) {
      // Into a folder: under the source's own name. A folder onto a new name: renamed.
      Location to = into_folder ? dst.Below(item.rel)
                    : folder    ? dst.Below(item.rel.substr(item.rel.find('/') + 1))
                                : dst;
      progress << "Copying " << item.from.text << " to " << to.text << "\n";
      TY_RETURN_IF_ERROR(CopyOne(api, item.from, to));
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<std::string>> ListUris(ApiClient& api, const std::string& uri, bool recursive,
                                            const std::string& project) {
  std::vector<std::string> lines;
  if (uri.empty()) {
    TY_ASSIGN_OR_RETURN(json page, api.Call("GET", "/storage/v1/b?project=" + UrlEncode(project)));
    for (const json& b : page.value("items", json::array())) {
      if (b.is_object() && b.contains("name")) lines.push_back("gs://" + b.value("name", "") + "/");
    }
    return lines;
  }
  TY_ASSIGN_OR_RETURN(Location at, ParseLocation(uri));
  if (!at.gcs) return InvalidArgumentError("'" + uri + "' is not a gs://BUCKET[/PATH] URI");
  TY_RETURN_IF_ERROR(CheckServerBucket(api, at.bucket));
  TY_ASSIGN_OR_RETURN(bool object, ObjectExists(api, at.bucket, at.object));
  if (object) return std::vector<std::string>{"gs://" + at.bucket + "/" + at.object};
  std::string prefix = at.object;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  TY_ASSIGN_OR_RETURN(Listing listing, List(api, at.bucket, prefix, !recursive));
  for (const std::string& name : listing.names) {
    if (name != prefix) lines.push_back("gs://" + at.bucket + "/" + name);
  }
  for (const std::string& p : listing.prefixes) lines.push_back("gs://" + at.bucket + "/" + p);
  std::sort(lines.begin(), lines.end());
  if (lines.empty() && !prefix.empty()) {
    return NotFoundError("'" + uri + "' matched no objects");
  }
  return lines;
}

}  // namespace trainyard::cli
