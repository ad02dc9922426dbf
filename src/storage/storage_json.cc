#include "storage/storage_json.h"

#include "api/http_status.h"
#include "common/parse.h"
#include "common/time.h"

namespace trainyard::storage {
using nlohmann::json;

int GcsHttpStatus(StatusCode code) {
  // Cloud Storage's own: preconditions (ifGenerationMatch, ...) fail with 412, and a write that
  // conflicts with the object's state with 409; the rest is google.rpc's mapping.
  static constexpr std::pair<StatusCode, int> kGcs[] = {{StatusCode::kFailedPrecondition, 409},
                                                        {StatusCode::kAborted, 412}};
  return api::HttpStatusFor(code, kGcs);
}

namespace {

std::string Reason(int http_status) {
  switch (http_status) {
    case 400:
      return "invalid";
    case 403:
      return "forbidden";
    case 404:
      return "notFound";
    case 409:
      return "conflict";
    case 412:
      return "conditionNotMet";
    case 413:
      return "uploadTooLarge";
    case 416:
      return "requestedRangeNotSatisfiable";
    case 429:
      return "rateLimitExceeded";
    case 501:
      return "notImplemented";
    default:
      return "backendError";
  }
}

}  // namespace

void SendGcsJson(httplib::Response& res, int http_status, const json& body) {
  res.status = http_status;
  res.set_content(body.dump(2) + "\n", "application/json; charset=UTF-8");
}

void SendGcsError(httplib::Response& res, const Status& status) {
  const int http = GcsHttpStatus(status.code());
  json error = {
      {"code", http},
      {"message", status.message()},
      {"errors",
       json::array(
           {{{"message", status.message()}, {"domain", "global"}, {"reason", Reason(http)}}})}};
  SendGcsJson(res, http, json{{"error", error}});
}

std::string BaseUrl(const httplib::Request& req) {
  std::string host = req.get_header_value("Host");
  if (host.empty()) host = req.local_addr + ":" + std::to_string(req.local_port);
  return "http://" + host;
}

StatusOr<std::string> UrlDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      return InvalidArgumentError("malformed percent-escape in the request path");
    }
    out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

json BucketJson(const BucketInfo& b, const std::string& base_url) {
  const std::string time = FormatTimestamp(b.created);
  json out{{"kind", "storage#bucket"},
           {"id", b.name},
           {"name", b.name},
           {"selfLink", base_url + "/storage/v1/b/" + b.name},
           {"projectNumber", "0"},
           {"metageneration", "1"},
           {"location", "US"},
           {"locationType", "multi-region"},
           {"storageClass", "STANDARD"},
           {"etag", "CAE="},
           {"timeCreated", time},
           {"updated", time}};
  if (!b.project.empty()) out["owner"] = {{"entity", "project-owners-" + b.project}};
  return out;
}

json ObjectJson(const ObjectInfo& o, const std::string& base_url) {
  const std::string gen = std::to_string(o.generation);
  const std::string path = "/b/" + o.bucket + "/o/" + UrlEncode(o.name);
  json j = {
      {"kind", "storage#object"},
      {"id", o.bucket + "/" + o.name + "/" + gen},
      {"selfLink", base_url + "/storage/v1" + path},
      {"mediaLink", base_url + "/download/storage/v1" + path + "?generation=" + gen + "&alt=media"},
      {"name", o.name},
      {"bucket", o.bucket},
      {"generation", gen},
      {"metageneration", "1"},
      {"contentType", o.content_type},
      {"storageClass", "STANDARD"},
      {"size", std::to_string(o.size)},
      {"etag", gen},
      {"timeCreated", FormatTimestamp(o.created)},
      {"updated", FormatTimestamp(o.updated)},
      {"timeStorageClassUpdated", FormatTimestamp(o.created)}};
  if (!o.md5_base64.empty()) j["md5Hash"] = o.md5_base64;
  if (!o.crc32c_base64.empty()) j["crc32c"] = o.crc32c_base64;
  if (!o.content_encoding.empty()) j["contentEncoding"] = o.content_encoding;
  if (!o.metadata.empty()) j["metadata"] = o.metadata;
  if (o.component_count > 0) j["componentCount"] = o.component_count;
  return j;
}

Status ParseWriteMetadata(const json& j, WriteMetadata* meta) {
  if (j.is_null()) return Status::Ok();
  if (!j.is_object()) return InvalidArgumentError("object metadata must be a JSON object");
  for (const char* field : {"contentType", "contentEncoding"}) {
    if (j.contains(field) && !j[field].is_string() && !j[field].is_null()) {
      return InvalidArgumentError(std::string(field) + " must be a string");
    }
  }
  if (j.contains("contentType") && j["contentType"].is_string()) {
    meta->content_type = j["contentType"];
  }
  if (j.contains("contentEncoding") && j["contentEncoding"].is_string()) {
    meta->content_encoding = j["contentEncoding"];
  }
  if (j.contains("metadata") && !j["metadata"].is_null()) {
    if (!j["metadata"].is_object()) return InvalidArgumentError("metadata must be an object");
    for (const auto& [key, value] : j["metadata"].items()) {
      if (value.is_null()) continue;
      meta->metadata[key] = value.is_string() ? value.get<std::string>() : value.dump();
    }
  }
  return Status::Ok();
}

StatusOr<Preconditions> PreconditionsFromQuery(const httplib::Request& req,
                                               const std::string& prefix) {
  Preconditions pre;
  for (const auto& [suffix, field] :
       {std::pair{"GenerationMatch", &pre.if_generation_match},
        std::pair{"GenerationNotMatch", &pre.if_generation_not_match}}) {
    std::string name = prefix.empty() ? std::string("if") + suffix : prefix + suffix;
    if (!req.has_param(name)) continue;
    auto v = ParseInt64(req.get_param_value(name));
    if (!v || *v < 0) {
      return InvalidArgumentError(name + ": '" + req.get_param_value(name) +
                                  "' must be a non-negative integer generation");
    }
    *field = *v;
  }
  return pre;
}

}  // namespace trainyard::storage
