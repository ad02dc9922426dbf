#include "storage/storage_routes.h"

#include "api/route_table.h"
#include "common/json_parse.h"
#include "common/parse.h"
#include "storage/object_hash.h"
#include "storage/storage_internal.h"
#include "storage/storage_json.h"

namespace trainyard::storage {
namespace {

using internal::Call;
using nlohmann::json;

constexpr size_t kCopyBlock = 1 << 20;
constexpr int kMaxComposeSources = 32;

// The request path after "/<api>/v1/", split at '/' and percent-decoded per segment (object names
// arrive with '/' escaped as %2F, so they are one segment).
struct Target {
  std::string api;  // "storage", "upload" or "download"
  std::vector<std::string> segments;
};

StatusOr<Target> ParseTarget(const httplib::Request& req) {
  std::string_view raw = req.target;
  raw = raw.substr(0, raw.find('?'));
  Target t;
  // gcloud sends resumable uploads to /resumable/upload/storage/v1/..., the others to /upload/...
  for (const auto& [prefix, api] :
       {std::pair{"/storage/v1/", "storage"}, std::pair{"/upload/storage/v1/", "upload"},
        std::pair{"/resumable/upload/storage/v1/", "upload"},
        std::pair{"/download/storage/v1/", "download"}}) {
    if (raw.starts_with(prefix)) {
      t.api = api;
      raw.remove_prefix(std::string_view(prefix).size());
      break;
    }
  }
  // The Node client sends JSON API calls to $STORAGE_EMULATOR_HOST/b/... (no /storage/v1).
  if (t.api.empty() && (raw == "/b" || raw.starts_with("/b/"))) {
    t.api = "storage";
    raw.remove_prefix(1);
  }
  if (t.api.empty()) return NotFoundError("not a storage path: " + std::string(raw));
  while (!raw.empty()) {
    size_t slash = raw.find('/');
    TY_ASSIGN_OR_RETURN(std::string seg, UrlDecode(raw.substr(0, slash)));
    t.segments.push_back(std::move(seg));
    raw = slash == std::string_view::npos ? "" : raw.substr(slash + 1);
  }
  return t;
}

std::string Join(const std::vector<std::string>& v, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out += (i > from ? "/" : "") + v[i];
  return out;
}

Status CheckAlt(const httplib::Request& req, bool media_allowed) {
  if (!req.has_param("alt")) return Status::Ok();
  const std::string alt = req.get_param_value("alt");
  if (alt == "json" || (media_allowed && alt == "media")) return Status::Ok();
  return InvalidArgumentError("alt: '" + alt + "' is not supported here; use alt=json" +
                              (media_allowed ? " or alt=media" : ""));
}

// Streams `src` into a new object `dst` (copy, rewrite); metadata from `meta`.
StatusOr<ObjectInfo> CopyInto(ObjectStore* store, ObjectReader& src, const std::string& bucket,
                              const std::string& name, const WriteMetadata& meta,
                              const Preconditions& pre) {
  TY_ASSIGN_OR_RETURN(auto writer, store->NewWriter(bucket, name));
  std::string buf(kCopyBlock, '\0');
  for (uint64_t off = 0; off < src.info().size;) {
    TY_ASSIGN_OR_RETURN(size_t n, src.ReadAt(off, buf.data(), buf.size()));
    if (n == 0) return DataLossError("object " + src.info().name + " shrank while being copied");
    TY_RETURN_IF_ERROR(writer->Append(std::string_view(buf.data(), n)));
    off += n;
  }
  return writer->Commit(meta, pre);
}

WriteMetadata MetadataOf(const ObjectInfo& o) {
  WriteMetadata m;
  m.content_type = o.content_type;
  m.content_encoding = o.content_encoding;
  m.metadata = o.metadata;
  return m;
}

StatusOr<json> ListObjects(const Call& c, const std::string& bucket) {
  ListOptions o;
  o.prefix = c.req.get_param_value("prefix");
  o.delimiter = c.req.get_param_value("delimiter");
  o.start_offset = c.req.get_param_value("startOffset");
  o.end_offset = c.req.get_param_value("endOffset");
  o.include_trailing_delimiter = c.req.get_param_value("includeTrailingDelimiter") == "true";
  if (c.req.has_param("maxResults")) {
    auto n = ParseInt64(c.req.get_param_value("maxResults"));
    if (!n || *n < 1) return InvalidArgumentError("maxResults must be a positive integer");
    o.max_results = static_cast<int>(std::min<int64_t>(*n, 1000));
  }
  if (c.req.has_param("pageToken")) {
    if (!Base64Decode(c.req.get_param_value("pageToken"), &o.start_after)) {
      return InvalidArgumentError("pageToken is not one this server returned");
    }
  }
  TY_ASSIGN_OR_RETURN(ListResult r, c.store->ListObjects(bucket, o));
  json out = {{"kind", "storage#objects"}};
  json items = json::array();
  for (const auto& obj : r.objects) items.push_back(ObjectJson(obj, c.base_url));
  if (!items.empty()) out["items"] = std::move(items);
  if (!r.prefixes.empty()) out["prefixes"] = r.prefixes;
  if (!r.next_start_after.empty()) out["nextPageToken"] = Base64Encode(r.next_start_after);
  return out;
}

StatusOr<json> Compose(const Call& c, const std::string& bucket, const std::string& name) {
  TY_ASSIGN_OR_RETURN(json body, internal::ReadJsonBody(c));
  if (!body.is_object() || !body.contains("sourceObjects") || !body["sourceObjects"].is_array() ||
      body["sourceObjects"].empty()) {
    return InvalidArgumentError("compose needs a body with a non-empty sourceObjects array");
  }
  if (body["sourceObjects"].size() > kMaxComposeSources) {
    return InvalidArgumentError("compose takes at most 32 sourceObjects");
  }
  WriteMetadata meta;
  if (body.contains("destination"))
    TY_RETURN_IF_ERROR(ParseWriteMetadata(body["destination"], &meta));
  TY_ASSIGN_OR_RETURN(Preconditions pre, PreconditionsFromQuery(c.req));
  TY_ASSIGN_OR_RETURN(auto writer, c.store->NewWriter(bucket, name));
  std::string buf(kCopyBlock, '\0');
  for (const auto& src : body["sourceObjects"]) {
    if (!src.is_object() || !src.contains("name") || !src["name"].is_string()) {
      return InvalidArgumentError("sourceObjects[].name must be a string");
    }
    TY_ASSIGN_OR_RETURN(auto reader, c.store->OpenObject(bucket, src["name"]));
    // A null generation is no generation (protojson; Python's client sends null for a blob it
    // has not loaded).
    if (src.contains("generation") && !src["generation"].is_null() &&
        src["generation"].dump() != "\"" + std::to_string(reader->info().generation) + "\"" &&
        src["generation"].dump() != std::to_string(reader->info().generation)) {
      return NotFoundError("No such object: " + bucket + "/" + src["name"].get<std::string>() +
                           " at generation " + src["generation"].dump());
    }
    meta.component_count += std::max(1, reader->info().component_count);
    if (meta.content_type.empty()) meta.content_type = reader->info().content_type;
    for (uint64_t off = 0; off < reader->info().size;) {
      TY_ASSIGN_OR_RETURN(size_t n, reader->ReadAt(off, buf.data(), buf.size()));
      if (n == 0) return DataLossError("source object shrank while being composed");
      TY_RETURN_IF_ERROR(writer->Append(std::string_view(buf.data(), n)));
      off += n;
    }
  }
  TY_ASSIGN_OR_RETURN(ObjectInfo info, writer->Commit(meta, pre));
  return ObjectJson(info, c.base_url);
}

StatusOr<json> CopyOrRewrite(const Call& c, const Target& t, size_t verb) {
  const std::string src_bucket = t.segments[1];
  const std::string src_name = Join(t.segments, 3, verb);
  const std::string dst_bucket = t.segments[verb + 2];
  const std::string dst_name = Join(t.segments, verb + 4, t.segments.size());
  TY_ASSIGN_OR_RETURN(json body, internal::ReadJsonBody(c));
  TY_ASSIGN_OR_RETURN(auto reader, c.store->OpenObject(src_bucket, src_name));
  WriteMetadata meta = MetadataOf(reader->info());
  if (body.is_object() && !body.empty()) {
    WriteMetadata override_meta;
    TY_RETURN_IF_ERROR(ParseWriteMetadata(body, &override_meta));
    if (!override_meta.content_type.empty()) meta.content_type = override_meta.content_type;
    if (!override_meta.metadata.empty()) meta.metadata = override_meta.metadata;
  }
  TY_ASSIGN_OR_RETURN(Preconditions pre, PreconditionsFromQuery(c.req));
  TY_ASSIGN_OR_RETURN(ObjectInfo info, CopyInto(c.store, *reader, dst_bucket, dst_name, meta, pre));
  json resource = ObjectJson(info, c.base_url);
  if (t.segments[verb] == "copyTo") return resource;
  return json{{"kind", "storage#rewriteResponse"},
              {"totalBytesRewritten", std::to_string(info.size)},
              {"objectSize", std::to_string(info.size)},
              {"done", true},
              {"resource", resource}};
}

StatusOr<json> PatchObject(const Call& c, const std::string& bucket, const std::string& name) {
  TY_ASSIGN_OR_RETURN(json body, internal::ReadJsonBody(c));
  if (!body.is_object()) return InvalidArgumentError("the body must be a JSON object");
  std::optional<std::string> content_type;
  if (body.contains("contentType") && body["contentType"].is_string()) {
    content_type = body["contentType"].get<std::string>();
  }
  std::map<std::string, std::optional<std::string>> metadata;
  if (body.contains("metadata") && body["metadata"].is_object()) {
    for (const auto& [k, v] : body["metadata"].items()) {
      metadata[k] = v.is_null() ? std::nullopt
                                : std::optional(v.is_string() ? v.get<std::string>() : v.dump());
    }
  }
  TY_ASSIGN_OR_RETURN(ObjectInfo info,
                      c.store->UpdateMetadata(bucket, name, content_type, metadata));
  return ObjectJson(info, c.base_url);
}

// Buckets: /b and /b/B.
StatusOr<json> HandleBuckets(const Call& c, const Target& t) {
  const std::string& method = c.req.method;
  // `project`, as Cloud Storage: a bucket's owner on insert; on list, the project whose buckets
  // (and the ownerless ones an operator made by hand) to list.
  const std::string project = c.req.get_param_value("project");
  if (t.segments.size() == 1 && method == "GET") {
    TY_ASSIGN_OR_RETURN(auto buckets, c.store->ListBuckets());
    json items = json::array();
    for (const auto& b : buckets) {
      if (project.empty() || b.project.empty() || b.project == project) {
        items.push_back(BucketJson(b, c.base_url));
      }
    }
    json out = {{"kind", "storage#buckets"}};
    if (!items.empty()) out["items"] = items;
    return out;
  }
  if (t.segments.size() == 1 && method == "POST") {
    TY_ASSIGN_OR_RETURN(json body, internal::ReadJsonBody(c));
    if (!body.is_object() || !body.contains("name") || !body["name"].is_string()) {
      return InvalidArgumentError("bucket insert needs a body {\"name\": \"BUCKET\"}");
    }
    TY_ASSIGN_OR_RETURN(BucketInfo b, c.store->CreateBucket(body["name"], project));
    return BucketJson(b, c.base_url);
  }
  const std::string& bucket = t.segments[1];
  if (method == "GET" || method == "PATCH" || method == "PUT") {
    TY_ASSIGN_OR_RETURN(BucketInfo b, c.store->GetBucket(bucket));
    return BucketJson(b, c.base_url);
  }
  if (method == "DELETE") {
    TY_RETURN_IF_ERROR(c.store->DeleteBucket(bucket));
    return json(nullptr);
  }
  return NotFoundError("no such method: " + method + " " + c.req.path);
}

// Everything under /storage/v1/b/B/o. Returns nullopt when the handler already responded.
StatusOr<std::optional<json>> HandleObjects(const Call& c, const Target& t) {
  const std::string& method = c.req.method;
  const std::string& bucket = t.segments[1];
  const auto& seg = t.segments;
  if (seg.size() == 3) {
    if (method == "GET") {
      TY_RETURN_IF_ERROR(CheckAlt(c.req, /*media_allowed=*/false));
      TY_ASSIGN_OR_RETURN(json out, ListObjects(c, bucket));
      return std::optional<json>(out);
    }
    return NotFoundError("no such method: " + method + " " + c.req.path);
  }
  for (size_t i = 4; method == "POST" && i + 4 < seg.size(); ++i) {
    if ((seg[i] == "copyTo" || seg[i] == "rewriteTo") && seg[i + 1] == "b" && seg[i + 3] == "o") {
      TY_ASSIGN_OR_RETURN(json out, CopyOrRewrite(c, t, i));
      return std::optional<json>(out);
    }
  }
  if (method == "POST" && seg.size() >= 5 && seg.back() == "compose") {
    TY_ASSIGN_OR_RETURN(json out, Compose(c, bucket, Join(seg, 3, seg.size() - 1)));
    return std::optional<json>(out);
  }
  const std::string name = Join(seg, 3, seg.size());
  if (method == "GET") {
    TY_RETURN_IF_ERROR(CheckAlt(c.req, /*media_allowed=*/true));
    if (c.req.get_param_value("alt") == "media") {
      internal::HandleDownload(c, bucket, name);
      return std::optional<json>();
    }
    TY_ASSIGN_OR_RETURN(ObjectInfo info, c.store->GetObject(bucket, name));
    if (c.req.has_param("generation") &&
        c.req.get_param_value("generation") != std::to_string(info.generation)) {
      return NotFoundError("No such object: " + bucket + "/" + name + " at generation " +
                           c.req.get_param_value("generation") + " (no object versioning)");
    }
    return std::optional<json>(ObjectJson(info, c.base_url));
  }
  if (method == "DELETE") {
    TY_ASSIGN_OR_RETURN(Preconditions pre, PreconditionsFromQuery(c.req));
    TY_RETURN_IF_ERROR(c.store->DeleteObject(bucket, name, pre));
    c.res.status = 204;
    return std::optional<json>();
  }
  if (method == "PATCH" || method == "PUT") {
    TY_ASSIGN_OR_RETURN(json out, PatchObject(c, bucket, name));
    return std::optional<json>(out);
  }
  return NotFoundError("no such method: " + method + " " + c.req.path);
}

void Dispatch(const Call& c) {
  auto t = ParseTarget(c.req);
  if (!t.ok()) return SendGcsError(c.res, t.status());
  const auto& seg = t->segments;
  if (seg.empty() || seg[0] != "b" || (t->api != "storage" && (seg.size() < 3 || seg[2] != "o"))) {
    return SendGcsError(c.res, NotFoundError("no such method: " + c.req.method + " " + c.req.path +
                                             " (see docs/api.md)"));
  }
  if (seg.size() >= 2) {
    if (Status s = ValidateBucketName(seg[1]); !s.ok()) return SendGcsError(c.res, s);
  }
  if (t->api == "upload") {
    if (seg.size() != 3)
      return SendGcsError(c.res, NotFoundError("uploads go to /upload/storage/v1/b/BUCKET/o"));
    return internal::HandleUpload(c, seg[1]);
  }
  if (t->api == "download") {
    if (seg.size() < 4)
      return SendGcsError(c.res,
                          NotFoundError("downloads read /download/storage/v1/b/BUCKET/o/OBJECT"));
    return internal::HandleDownload(c, seg[1], Join(seg, 3, seg.size()));
  }
  if (seg.size() <= 2) {
    if (Status s = CheckAlt(c.req, false); !s.ok()) return SendGcsError(c.res, s);
    auto out = HandleBuckets(c, *t);
    if (!out.ok()) return SendGcsError(c.res, out.status());
    if (out->is_null()) {
      c.res.status = 204;
      return;
    }
    return SendGcsJson(c.res, 200, *out);
  }
  if (seg[2] != "o") return SendGcsError(c.res, NotFoundError("no such method: " + c.req.path));
  auto out = HandleObjects(c, *t);
  if (!out.ok()) return SendGcsError(c.res, out.status());
  if (*out) SendGcsJson(c.res, 200, **out);
}

void Guarded(const Call& c) {
  try {
    Dispatch(c);
  } catch (const std::exception& e) {
    SendGcsError(c.res, InternalError(std::string("internal error: ") + e.what()));
  }
}

}  // namespace

namespace internal {

StatusOr<json> ReadJsonBody(const Call& c) {
  if (c.body == nullptr) return json(nullptr);
  std::string text;
  bool too_big = false;
  const bool ok = (*c.body)([&](const char* data, size_t n) {
    if (text.size() + n > c.options.max_json_bytes) {
      too_big = true;
      return false;
    }
    text.append(data, n);
    return true;
  });
  if (too_big) {
    return InvalidArgumentError("JSON body exceeds " + std::to_string(c.options.max_json_bytes) +
                                " bytes");
  }
  if (!ok) return InvalidArgumentError("the request body was not received completely");
  if (text.empty()) return json(nullptr);
  return ParseJson(text);
}

}  // namespace internal

bool IsStoragePath(std::string_view path) {
  return path.starts_with("/storage/v1/") || path.starts_with("/upload/storage/v1/") ||
         path.starts_with("/resumable/upload/storage/v1/") ||
         path.starts_with("/download/storage/v1/") || path == "/b" || path.starts_with("/b/");
}

void RegisterStorageRoutes(api::RouteTable& routes, ObjectStore* store,
                           StorageRoutesOptions options) {
  const std::string pattern = R"(/(upload/|resumable/upload/|download/)?storage/v1/.*|/b(/.*)?)";
  auto plain = [store, options](const httplib::Request& req, httplib::Response& res) {
    Guarded(Call{req, res, nullptr, store, options, BaseUrl(req)});
  };
  auto with_body = [store, options](const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& reader) {
    Guarded(Call{req, res, &reader, store, options, BaseUrl(req)});
  };
  using auth::Access;
  routes.Get(pattern, Access::kRead, plain);
  routes.Post(pattern, Access::kWrite, api::Handler(plain));
  routes.Put(pattern, Access::kWrite, api::Handler(plain));
  routes.Patch(pattern, Access::kWrite, api::Handler(plain));
  routes.Delete(pattern, Access::kWrite, api::Handler(plain));
  routes.Post(pattern, Access::kWrite, api::ReaderHandler(with_body));
  routes.Put(pattern, Access::kWrite, api::ReaderHandler(with_body));
  routes.Patch(pattern, Access::kWrite, api::ReaderHandler(with_body));
  routes.Delete(pattern, Access::kWrite, api::ReaderHandler(with_body));
}

}  // namespace trainyard::storage
