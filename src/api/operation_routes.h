// google.longrunning.Operations over the stored operations (controller/operation_controller.h),
// under /v1/ and, as the same routes, under /ui/ — the path the Node and Python REST transports
// poll (their http rules list /ui/{name=...} first):
//   GET    /{v1|ui}/projects/{p}/locations/{l}/operations/{op}                     get
//   GET    /{v1|ui}/projects/{p}/locations/{l}/{collection}/{id}/operations/{op}   get
//   GET    /{v1|ui}/projects/{p}/locations/{l}[/{collection}/{id}]/operations      list
//   POST   .../operations/{op}:wait     {"timeout": "10s"} (default and cap: 60s)
//   POST   .../operations/{op}:cancel   {} ({} for a done operation)
//   DELETE .../operations/{op}          forget it
// Access: read for get/list/wait, write for cancel/delete, on the project in the path.
#pragma once

#include "api/route_table.h"

namespace trainyard::controller {
class OperationController;
}

namespace trainyard::api {

// `operations` must outlive the server.
void RegisterOperationRoutes(RouteTable& routes, controller::OperationController* operations);

}  // namespace trainyard::api
