// Media downloads: the object's bytes streamed from disk, with a single byte Range as GCS
// serves it (206 + Content-Range; 416 when the range starts past the end) and the
// x-goog-hash/x-goog-generation headers clients validate downloads with.
#include <memory>

#include "common/parse.h"
#include "storage/storage_internal.h"
#include "storage/storage_json.h"

namespace trainyard::storage::internal {
namespace {

constexpr size_t kSendBlock = 1 << 20;

struct ByteRange {
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive
};

// nullopt = serve the whole object (no Range, or one this server does not apply: several ranges
// or another unit, which RFC 9110 lets a server ignore). OUT_OF_RANGE = unsatisfiable.
StatusOr<std::optional<ByteRange>> ParseRange(const std::string& header, uint64_t size) {
  if (header.empty() || !header.starts_with("bytes=") || header.find(',') != std::string::npos) {
    return std::optional<ByteRange>();
  }
  std::string spec = header.substr(6);
  size_t dash = spec.find('-');
  if (dash == std::string::npos) return InvalidArgumentError("malformed Range header: " + header);
  auto first = dash == 0 ? std::optional<int64_t>() : ParseInt64(spec.substr(0, dash));
  auto last =
      dash + 1 == spec.size() ? std::optional<int64_t>() : ParseInt64(spec.substr(dash + 1));
  if ((dash != 0 && !first) || (dash + 1 != spec.size() && !last) || (!first && !last)) {
    return InvalidArgumentError("malformed Range header: " + header);
  }
  // Plain values past this point: gcc 14 takes *optional of an int for maybe-uninitialized.
  const bool has_first = first.has_value(), has_last = last.has_value();
  const int64_t first_value = first.value_or(0), last_value = last.value_or(0);
  ByteRange r;
  if (!has_first) {  // suffix: the last N bytes
    if (last_value == 0 || size == 0) return OutOfRangeError("unsatisfiable");
    r.first = size - std::min<uint64_t>(size, static_cast<uint64_t>(last_value));
    r.last = size - 1;
    return std::optional<ByteRange>(r);
  }
  if (static_cast<uint64_t>(first_value) >= size) return OutOfRangeError("unsatisfiable");
  if (has_last && last_value < first_value) {
    return InvalidArgumentError("malformed Range header: " + header);
  }
  r.first = static_cast<uint64_t>(first_value);
  r.last = has_last ? std::min<uint64_t>(static_cast<uint64_t>(last_value), size - 1) : size - 1;
  return std::optional<ByteRange>(r);
}

}  // namespace

void HandleDownload(const Call& c, const std::string& bucket, const std::string& name) {
  // cpp-httplib applies req.ranges to every response after the handler; ranges are applied here
  // instead (one range, 416 with a JSON body), so its own pass must see none.
  const_cast<httplib::Request&>(c.req).ranges.clear();
  auto opened = c.store->OpenObject(bucket, name);
  if (!opened.ok()) return SendGcsError(c.res, opened.status());
  std::shared_ptr<ObjectReader> reader = std::move(opened).value();
  const ObjectInfo& info = reader->info();
  if (c.req.has_param("generation") &&
      c.req.get_param_value("generation") != std::to_string(info.generation)) {
    return SendGcsError(c.res,
                        NotFoundError("No such object: " + bucket + "/" + name + " at generation " +
                                      c.req.get_param_value("generation")));
  }
  auto range = ParseRange(c.req.get_header_value("Range"), info.size);
  if (!range.ok()) {
    if (range.status().code() == StatusCode::kOutOfRange) {
      c.res.set_header("Content-Range", "bytes */" + std::to_string(info.size));
      SendGcsError(
          c.res, InvalidArgumentError(
                     "The requested range cannot be satisfied: " + c.req.get_header_value("Range") +
                     " of an object of " + std::to_string(info.size) + " bytes"));
      c.res.status = 416;
      return;
    }
    return SendGcsError(c.res, range.status());
  }
  c.res.set_header("x-goog-hash", "crc32c=" + info.crc32c_base64 + ",md5=" + info.md5_base64);
  c.res.set_header("x-goog-generation", std::to_string(info.generation));
  c.res.set_header("x-goog-metageneration", "1");
  c.res.set_header("x-goog-stored-content-length", std::to_string(info.size));
  c.res.set_header("x-goog-stored-content-encoding",
                   info.content_encoding.empty() ? "identity" : info.content_encoding);
  c.res.set_header("x-goog-storage-class", "STANDARD");
  c.res.set_header("ETag", "\"" + std::to_string(info.generation) + "\"");
  c.res.set_header("Accept-Ranges", "bytes");
  uint64_t first = 0;
  uint64_t length = info.size;
  c.res.status = 200;
  if (*range) {
    first = (*range)->first;
    length = (*range)->last - first + 1;
    c.res.status = 206;
    c.res.set_header("Content-Range", "bytes " + std::to_string(first) + "-" +
                                          std::to_string((*range)->last) + "/" +
                                          std::to_string(info.size));
  }
  if (length == 0) {
    c.res.set_content("", info.content_type);
    return;
  }
  c.res.set_content_provider(length, info.content_type,
                             [reader, first, buf = std::make_shared<std::string>()](
                                 size_t offset, size_t want, httplib::DataSink& sink) {
                               buf->resize(std::min(want, kSendBlock));
                               auto n = reader->ReadAt(first + offset, buf->data(), buf->size());
                               if (!n.ok() || *n == 0)
                                 return false;  // I/O error or truncated: abort the response
                               return sink.write(buf->data(), *n);
                             });
}

}  // namespace trainyard::storage::internal
