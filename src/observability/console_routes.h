// The browser-facing routes of `trainyard server` (docs/console.md):
//   GET /          the web console (index.html), or a page saying how to build it
//   GET /assets/*  its scripts and styles (embedded; nothing is fetched from elsewhere)
//   GET /metrics   Prometheus text format (ServerMetrics)
// and the hook that counts every HTTP exchange into ServerMetrics.
#pragma once

#include <span>

#include "api/route_table.h"
#include "observability/console_assets.h"
#include "observability/server_metrics.h"

namespace httplib {
class Server;
}

namespace trainyard::observability {

// Serves `assets` at / and /assets/*. The Content-Security-Policy allows only same-origin
// requests, so the console cannot reach any other host even by mistake.
void RegisterConsoleRoutes(api::RouteTable& routes, std::span<const ConsoleAsset> assets);

// GET /metrics, and counts every request the server answers (httplib's logger hook, which runs
// after the response is complete). `metrics` must outlive the server.
void RegisterMetricsRoute(api::RouteTable& routes, ServerMetrics* metrics);

}  // namespace trainyard::observability
