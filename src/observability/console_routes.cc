#include "observability/console_routes.h"

#include <httplib.h>

#include "api/http_status.h"

namespace trainyard::observability {
namespace {

constexpr const char* kCsp =
    "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' "
    "'unsafe-inline'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors "
    "'none'";

constexpr const char* kNotBuiltPage = R"(<!doctype html>
<html><head><meta charset="utf-8"><title>Trainyard</title></head>
<body style="font-family: sans-serif; max-width: 44em; margin: 3em auto">
<h1>Trainyard server</h1>
<p>This <code>trainyard</code> binary was built without the web console: the build machine had
no <code>npm</code>. The REST API works (see docs/api.md), and Prometheus metrics are at
<a href="/metrics">/metrics</a>.</p>
<p>To get the console, install Node.js and npm (<code>apt-get install nodejs npm</code>, or
<code>scripts/install-deps.sh</code>), then re-run CMake and rebuild:
<code>cmake --preset default &amp;&amp; cmake --build build --target trainyard</code>.</p>
</body></html>
)";

const ConsoleAsset* Find(std::span<const ConsoleAsset> assets, std::string_view path) {
  for (const ConsoleAsset& a : assets) {
    if (a.path == path) return &a;
  }
  return nullptr;
}

}  // namespace

void RegisterConsoleRoutes(api::RouteTable& routes, std::span<const ConsoleAsset> assets) {
  routes.Get("/", auth::Access::kPublic, [assets](const httplib::Request&, httplib::Response& res) {
    res.set_header("Content-Security-Policy", kCsp);
    res.set_header("Cache-Control", "no-cache");
    if (const ConsoleAsset* index = Find(assets, "index.html")) {
      res.set_content(index->data.data(), index->data.size(), "text/html; charset=utf-8");
    } else {
      res.set_content(kNotBuiltPage, "text/html; charset=utf-8");
    }
  });
  routes.Get("/assets/(.+)", auth::Access::kPublic,
             [assets](const httplib::Request& req, httplib::Response& res) {
               const ConsoleAsset* a = Find(assets, "assets/" + std::string(req.matches[1]));
               if (!a) {
                 res.status = 404;
                 res.set_content(api::ErrorBody(NotFoundError("no such console asset: assets/" +
                                                              std::string(req.matches[1])))
                                         .dump(2) +
                                     "\n",
                                 "application/json; charset=utf-8");
                 return;
               }
               // Vite puts a content hash in every asset name, so they never change under one URL.
               res.set_header("Cache-Control", "public, max-age=31536000, immutable");
               res.set_content(a->data.data(), a->data.size(), std::string(a->content_type));
             });
}

void RegisterMetricsRoute(api::RouteTable& routes, ServerMetrics* metrics) {
  routes.Get("/metrics", auth::Access::kRead,
             [metrics](const httplib::Request&, httplib::Response& res) {
               res.set_content(metrics->Render(), kPrometheusContentType);
             });
  routes.AddLogger([metrics](const httplib::Request& req, const httplib::Response& res) {
    metrics->CountRequest(req.method, req.path, res.status);
  });
}

}  // namespace trainyard::observability
