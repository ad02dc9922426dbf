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
// A :wait without a free long-poll slot answers at once with the operation as it is, as if the
// timeout had passed (long_poll_slots.h).
#pragma once

#include "api/long_poll_slots.h"
#include "api/route_table.h"

namespace trainyard::controller {
class OperationController;
}

namespace trainyard::api {

// `operations` and `long_polls` must outlive the server.
void RegisterOperationRoutes(RouteTable& routes, controller::OperationController* operations,
                             LongPollSlots* long_polls);

}  // namespace trainyard::api
