// Uploads: uploadType=media (the body is the object), multipart (metadata + media parts,
// multipart_upload.h) and resumable (a session, then chunks with Content-Range, answered 308 with
// the persisted Range until the last one). Every path streams the body to disk and commits the
// object only once all of it arrived (ObjectWriter / FinishUpload): a broken request leaves
// nothing behind.
#include <optional>

#include "common/disk_fault.h"
#include "common/json_parse.h"
#include "common/parse.h"
#include "storage/multipart_upload.h"
#include "storage/storage_internal.h"
#include "storage/storage_json.h"

namespace trainyard::storage::internal {
namespace {

using nlohmann::json;

// A write the bucket root's disk refused (full, out of inodes, read-only) as common/disk_fault.h
// words it, 429 RESOURCE_EXHAUSTED naming the object `uri`; the root's path goes to the server
// log. Other errors unchanged.
Status OnDisk(const Call& c, const std::string& uri, const Status& status) {
  return AsDiskFault(status, uri, c.options.root);
}

std::string Uri(const std::string& bucket, const std::string& name) {
  return "gs://" + bucket + "/" + name;
}

// Responds with the error; the unread body (if any) makes the connection unusable afterwards.
void Fail(const Call& c, const Status& status) {
  SendGcsError(c.res, status);
  if (c.body != nullptr) c.res.set_header("Connection", "close");
}

// Streams the request body into `writer`; false with `*error` set on failure.
bool StreamBody(const Call& c, ObjectWriter& writer, Status* error) {
  if (c.body == nullptr) return true;
  const bool ok = (*c.body)([&](const char* data, size_t n) {
    *error = writer.Append(std::string_view(data, n));
    return error->ok();
  });
  if (!ok && error->ok())
    *error = InvalidArgumentError("the upload body was not received completely");
  return ok;
}

void MediaUpload(const Call& c, const std::string& bucket, const Preconditions& pre) {
  const std::string name = c.req.get_param_value("name");
  if (name.empty())
    return Fail(c, InvalidArgumentError("uploadType=media needs the name parameter"));
  auto writer = c.store->NewWriter(bucket, name);
  if (!writer.ok()) return Fail(c, OnDisk(c, Uri(bucket, name), writer.status()));
  Status error;
  if (!StreamBody(c, **writer, &error)) return Fail(c, OnDisk(c, Uri(bucket, name), error));
  WriteMetadata meta;
  meta.content_type = c.req.get_header_value("Content-Type");
  auto info = (*writer)->Commit(meta, pre);
  if (!info.ok()) return SendGcsError(c.res, OnDisk(c, Uri(bucket, name), info.status()));
  SendGcsJson(c.res, 200, ObjectJson(*info, c.base_url));
}

void MultipartUpload(const Call& c, const std::string& bucket, const Preconditions& pre) {
  auto boundary = MultipartBoundary(c.req.get_header_value("Content-Type"));
  if (!boundary.ok()) return Fail(c, boundary.status());
  std::unique_ptr<ObjectWriter> writer;
  WriteMetadata meta;
  json metadata;
  // The metadata part comes first; the object's name may be in it, so the writer is made when
  // the first media byte (or the end of an empty media part) arrives.
  std::function<Status()> open_writer;
  MultipartUploadParser* parser_ptr = nullptr;
  std::string uri = "gs://" + bucket + "/";
  open_writer = [&]() -> Status {
    if (writer) return Status::Ok();
    if (parser_ptr->metadata_json().empty()) {
      metadata = json::object();
    } else {
      TY_ASSIGN_OR_RETURN(metadata, ParseJson(parser_ptr->metadata_json()));
    }
    if (!metadata.is_object())
      return InvalidArgumentError("the multipart metadata part is not a JSON object");
    TY_RETURN_IF_ERROR(ParseWriteMetadata(metadata, &meta));
    if (meta.content_type.empty()) meta.content_type = parser_ptr->media_content_type();
    std::string name = c.req.get_param_value("name");
    if (name.empty() && metadata.contains("name") && metadata["name"].is_string())
      name = metadata["name"];
    if (name.empty())
      return InvalidArgumentError(
          "the multipart metadata has no \"name\" (nor is there a name parameter)");
    uri = Uri(bucket, name);
    TY_ASSIGN_OR_RETURN(writer, c.store->NewWriter(bucket, name));
    return Status::Ok();
  };
  MultipartUploadParser parser(*boundary, [&](std::string_view data) -> Status {
    TY_RETURN_IF_ERROR(open_writer());
    return writer->Append(data);
  });
  parser_ptr = &parser;
  Status error;
  if (c.body != nullptr) {
    const bool ok = (*c.body)([&](const char* data, size_t n) {
      error = parser.Feed(std::string_view(data, n));
      return error.ok();
    });
    if (!ok && error.ok())
      error = InvalidArgumentError("the upload body was not received completely");
  }
  if (error.ok()) error = parser.Finish();
  if (error.ok()) error = open_writer();
  if (!error.ok()) return Fail(c, OnDisk(c, uri, error));
  auto hash = [&](const char* field) {
    return metadata.contains(field) && metadata[field].is_string()
               ? metadata[field].get<std::string>()
               : "";
  };
  auto info = writer->Commit(meta, pre, hash("md5Hash"), hash("crc32c"));
  if (!info.ok()) return SendGcsError(c.res, OnDisk(c, uri, info.status()));
  SendGcsJson(c.res, 200, ObjectJson(*info, c.base_url));
}

void StartResumable(const Call& c, const std::string& bucket, const Preconditions& pre) {
  auto body = ReadJsonBody(c);
  if (!body.ok()) return Fail(c, body.status());
  UploadSession s;
  s.bucket = bucket;
  s.pre = pre;
  if (Status st = ParseWriteMetadata(*body, &s.meta); !st.ok()) return Fail(c, st);
  s.name = c.req.get_param_value("name");
  if (s.name.empty() && body->is_object() && body->contains("name") &&
      (*body)["name"].is_string()) {
    s.name = (*body)["name"];
  }
  if (s.name.empty())
    return Fail(c, InvalidArgumentError(
                       "a resumable upload needs the object name (name parameter or metadata)"));
  if (s.meta.content_type.empty())
    s.meta.content_type = c.req.get_header_value("X-Upload-Content-Type");
  if (c.req.has_header("X-Upload-Content-Length")) {
    auto n = ParseInt64(c.req.get_header_value("X-Upload-Content-Length"));
    if (!n || *n < 0)
      return Fail(c, InvalidArgumentError("X-Upload-Content-Length must be a byte count"));
    s.total_size = static_cast<uint64_t>(*n);
  }
  auto started = c.store->StartUpload(s);
  if (!started.ok()) return Fail(c, OnDisk(c, Uri(bucket, s.name), started.status()));
  c.res.status = 200;
  c.res.set_header("Location", c.base_url + "/upload/storage/v1/b/" + bucket +
                                   "/o?uploadType=resumable&name=" + UrlEncode(s.name) +
                                   "&upload_id=" + started->id);
  c.res.set_header("X-GUploader-UploadID", started->id);
  c.res.set_content("", "text/plain");
}

struct ContentRange {
  std::optional<uint64_t> first, last;  // absent for "bytes */T"
  std::optional<uint64_t> total;        // absent for ".../*"
};

// "bytes A-B/T", "bytes A-B/*", "bytes A-*/T" (length unknown), "bytes */T", "bytes */*".
StatusOr<ContentRange> ParseContentRange(const std::string& header) {
  const Status bad = InvalidArgumentError(
      "Content-Range '" + header + "' is not 'bytes FIRST-LAST/TOTAL' (TOTAL or LAST may be *)");
  if (!header.starts_with("bytes ")) return bad;
  std::string v = header.substr(6);
  size_t slash = v.find('/');
  if (slash == std::string::npos) return bad;
  ContentRange r;
  std::string range = v.substr(0, slash), total = v.substr(slash + 1);
  if (total != "*") {
    auto t = ParseInt64(total);
    if (!t || *t < 0) return bad;
    r.total = static_cast<uint64_t>(*t);
  }
  if (range == "*") return r;
  size_t dash = range.find('-');
  if (dash == std::string::npos) return bad;
  auto first = ParseInt64(range.substr(0, dash));
  if (!first || *first < 0) return bad;
  r.first = static_cast<uint64_t>(*first);
  if (range.substr(dash + 1) != "*") {
    auto last = ParseInt64(range.substr(dash + 1));
    if (!last || *last < *first) return bad;
    r.last = static_cast<uint64_t>(*last);
  }
  if (r.total && r.last && *r.last >= *r.total) return bad;
  return r;
}

void SendIncomplete(const Call& c, uint64_t persisted) {
  c.res.status = 308;
  if (persisted > 0) c.res.set_header("Range", "bytes=0-" + std::to_string(persisted - 1));
  c.res.set_content("", "text/plain");
}

void Finish(const Call& c, const std::string& id, const std::string& uri) {
  auto info = c.store->FinishUpload(id);
  if (!info.ok()) return SendGcsError(c.res, OnDisk(c, uri, info.status()));
  SendGcsJson(c.res, 200, ObjectJson(*info, c.base_url));
}

void ResumableChunk(const Call& c, const std::string& id) {
  auto session = c.store->GetUpload(id);
  if (!session.ok()) return Fail(c, session.status());
  const std::string uri = Uri(session->bucket, session->name);
  if (session->finished) return Finish(c, id, uri);
  ContentRange range;
  const std::string header = c.req.get_header_value("Content-Range");
  const bool has_length = c.req.has_header("Content-Length");
  const uint64_t content_length =
      has_length
          ? static_cast<uint64_t>(ParseInt64(c.req.get_header_value("Content-Length")).value_or(0))
          : 0;
  if (!header.empty()) {
    auto parsed = ParseContentRange(header);
    if (!parsed.ok()) return Fail(c, parsed.status());
    range = *parsed;
  } else if (c.body != nullptr && has_length) {  // the whole object in one request
    range = {0, content_length > 0 ? std::optional<uint64_t>(content_length - 1) : std::nullopt,
             content_length};
  } else if (c.body == nullptr) {
    range.total = session->persisted;  // an empty final request
  }
  std::optional<uint64_t> total = range.total ? range.total : session->total_size;
  if (range.total && session->total_size && *range.total != *session->total_size) {
    return Fail(c, InvalidArgumentError("Content-Range total " + std::to_string(*range.total) +
                                        " differs from the declared X-Upload-Content-Length " +
                                        std::to_string(*session->total_size)));
  }
  if (!range.first) {  // status query, or finalize without data
    if (c.body != nullptr && content_length > 0) {
      return Fail(c, InvalidArgumentError("Content-Range 'bytes */...' cannot carry data"));
    }
    if (range.total && session->persisted == *range.total) return Finish(c, id, uri);
    return SendIncomplete(c, session->persisted);
  }
  if (range.last && has_length && *range.last - *range.first + 1 != content_length) {
    return Fail(c,
                InvalidArgumentError("Content-Range '" + header + "' covers " +
                                     std::to_string(*range.last - *range.first + 1) +
                                     " bytes but the body has " + std::to_string(content_length)));
  }
  uint64_t received = 0;
  bool overrun = false;
  auto read = [&](const ObjectStore::ChunkSink& sink) {
    if (c.body == nullptr) return true;
    return (*c.body)([&](const char* data, size_t n) {
      received += n;
      if ((total && *range.first + received > *total) ||
          (range.last && *range.first + received > *range.last + 1)) {
        overrun = true;
        return false;
      }
      return sink(data, n);
    });
  };
  auto appended = c.store->AppendUpload(id, *range.first, read);
  if (overrun) {
    return Fail(c, InvalidArgumentError("the chunk has more bytes than its Content-Range '" +
                                        header + "' allows; nothing of it was kept"));
  }
  if (!appended.ok()) return Fail(c, OnDisk(c, uri, appended.status()));
  // Without a known total, an open-ended chunk ("A-*/*") is the rest of the object.
  const bool complete = total ? appended->persisted == *total : !range.last;
  if (complete) return Finish(c, id, uri);
  SendIncomplete(c, appended->persisted);
}

}  // namespace

void HandleUpload(const Call& c, const std::string& bucket) {
  const std::string& method = c.req.method;
  if (c.req.has_param("upload_id")) {
    const std::string id = c.req.get_param_value("upload_id");
    if (method == "DELETE") {
      Status s = c.store->CancelUpload(id);
      if (!s.ok()) return SendGcsError(c.res, s);
      c.res.status = 499;
      c.res.set_content("", "text/plain");
      return;
    }
    if (method == "PUT" || method == "POST") return ResumableChunk(c, id);
  }
  if (method != "POST") {
    return Fail(c, NotFoundError("no such method: " + method + " " + c.req.path));
  }
  auto pre = PreconditionsFromQuery(c.req);
  if (!pre.ok()) return Fail(c, pre.status());
  std::string type = c.req.get_param_value("uploadType");
  if (type.empty()) {
    type = c.req.get_header_value("Content-Type").starts_with("multipart/") ? "multipart" : "media";
  }
  if (type == "media") return MediaUpload(c, bucket, *pre);
  if (type == "multipart") return MultipartUpload(c, bucket, *pre);
  if (type == "resumable") return StartResumable(c, bucket, *pre);
  Fail(c, InvalidArgumentError("uploadType: '" + type +
                               "' is not one of media, multipart, resumable"));
}

}  // namespace trainyard::storage::internal
