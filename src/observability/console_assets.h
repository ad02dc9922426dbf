// The web console's static files (web/, built by Vite at build time), embedded in the server
// binary by cmake/embed_assets.cmake, which generates the definition of ConsoleAssets().
#pragma once

#include <span>
#include <string_view>

namespace trainyard::observability {

struct ConsoleAsset {
  std::string_view path;  // "index.html", "assets/index-1a2b3c.js"
  std::string_view content_type;
  std::string_view data;
};

// Every embedded file; empty when the build machine had no npm (the console was not built).
std::span<const ConsoleAsset> ConsoleAssets();

}  // namespace trainyard::observability
