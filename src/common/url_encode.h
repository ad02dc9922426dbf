// Percent-encoding for names put into URL paths and query values (object names, page tokens).
#pragma once

#include <string>
#include <string_view>

namespace trainyard {

// Percent-encodes every byte except RFC 3986's unreserved characters (A-Z a-z 0-9 - _ . ~), so
// the result is one path segment or query value whatever `s` holds ('/', '?', '%', UTF-8, ...).
std::string UrlEncode(std::string_view s);

}  // namespace trainyard
