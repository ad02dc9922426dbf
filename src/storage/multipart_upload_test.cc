#include "storage/multipart_upload.h"

#include <gtest/gtest.h>

namespace trainyard::storage {
namespace {

// Feeds `body` in pieces of `step` bytes; returns "metadata|type|media" or the error.
std::string Parse(const std::string& boundary, const std::string& body, size_t step) {
  std::string media;
  MultipartUploadParser parser(boundary, [&](std::string_view d) {
    media.append(d);
    return Status::Ok();
  });
  for (size_t i = 0; i < body.size(); i += step) {
    Status s = parser.Feed(std::string_view(body).substr(i, step));
    if (!s.ok()) return s.ToString();
  }
  Status s = parser.Finish();
  if (!s.ok()) return s.ToString();
  return parser.metadata_json() + "|" + parser.media_content_type() + "|" + media;
}

TEST(MultipartUploadTest, BoundaryFromQuotedContentTypes) {
  EXPECT_EQ(*MultipartBoundary("multipart/related; boundary='===============123=='"),
            "===============123==");
  EXPECT_EQ(*MultipartBoundary("multipart/related; boundary=\"abc\"; charset=x"), "abc");
  EXPECT_EQ(*MultipartBoundary("Multipart/Related;boundary=xyz"), "xyz");
  EXPECT_FALSE(MultipartBoundary("multipart/form-data; boundary=x").ok());
  EXPECT_FALSE(MultipartBoundary("multipart/related").ok());
}

TEST(MultipartUploadTest, BareLfBodyAsGcloudSendsIt) {
  const std::string body =
      "--==b==\nContent-Type: application/json\nMIME-Version: 1.0\n\n{\"name\": \"x\"}\n"
      "--==b==\nContent-Type: text/plain\nMIME-Version: 1.0\nContent-Transfer-Encoding: binary\n\n"
      "line1\nline2\n\n--==b==--";
  for (size_t step : {1, 3, 7, 1000}) {
    EXPECT_EQ(Parse("==b==", body, step), "{\"name\": \"x\"}|text/plain|line1\nline2\n") << step;
  }
}

TEST(MultipartUploadTest, CrlfBodyWithPreambleAndBinaryMedia) {
  std::string media;
  for (int i = 0; i < 200000; ++i) media += static_cast<char>(i * 7);
  const std::string body =
      "preamble\r\n--b\r\nContent-Type: application/json\r\n\r\n{}\r\n--b\r\n"
      "Content-Type: application/octet-stream\r\n\r\n" +
      media + "\r\n--b--\r\n";
  for (size_t step : {4096, 65536}) {
    EXPECT_EQ(Parse("b", body, step), "{}|application/octet-stream|" + media) << step;
  }
}

TEST(MultipartUploadTest, EmptyMediaPart) {
  EXPECT_EQ(Parse("b", "--b\r\n\r\n{}\r\n--b\r\n\r\n\r\n--b--", 5), "{}||");
}

TEST(MultipartUploadTest, MalformedBodiesAreRejected) {
  EXPECT_NE(Parse("b", "--other\r\n\r\n{}\r\n--other--", 100).find("INVALID_ARGUMENT"),
            std::string::npos);
  // Truncated: no closing delimiter.
  EXPECT_NE(Parse("b", "--b\r\n\r\n{}\r\n--b\r\n\r\ndata", 100).find("closed by"),
            std::string::npos);
  // A third part.
  EXPECT_NE(Parse("b", "--b\n\n{}\n--b\n\nx\n--b\n\ny\n--b--", 100).find("more than two"),
            std::string::npos);
}

}  // namespace
}  // namespace trainyard::storage
