// Standard base64 (RFC 4648 section 4, with padding): Cloud Storage's md5Hash and crc32c, and
// google.api.HttpBody's `data` in JSON (rawPredict through Google's REST clients).
#pragma once

#include <string>
#include <string_view>

namespace trainyard {

std::string Base64Encode(std::string_view bytes);
// Inverse of Base64Encode; false (with *out partly written) on malformed input.
bool Base64Decode(std::string_view text, std::string* out);

}  // namespace trainyard
