// Trainyard extensions that tell a client (the web console, docs/console.md) what surrounds the
// resources; every one is in the route table with its access, and none is a Vertex method:
//   GET /v1/caller        who the request's token is: {"authentication", "tokenId", "project",
//                         "role", "access": {"read", "write", "admin"}} (read). Without --auth
//                         every caller may do everything: authentication false, role "admin",
//                         project "*".
//   GET /v1/projects      the projects the caller's token may see and, in each, the locations
//                         that hold resources with their counts (read): {"projects": [{"projectId",
//                         "locations": [{"locationId", "name": "projects/P/locations/L",
//                         "resourceCounts": {"customJobs": n, ...}}]}]}. A token of one project
//                         sees that project (also when it holds nothing); a "*" token, or any
//                         caller without --auth, every project that holds a resource.
//   GET /v1/machineTypes  the machine catalog with prices (read; machine_listing.h)
//   GET /v1/containerImages  images this server runs, for the console's image field (read):
//                         {"containerImages": [{"imageUri", "description", "use": "TRAINING" |
//                         "SERVING" | "BATCH_PREDICTION"}]} (spec::ImageCatalog::Suggestions)
#pragma once

#include "api/route_table.h"

namespace trainyard::controller {
class ResourceDirectory;
}
namespace trainyard::spec {
class ImageCatalog;
}

namespace trainyard::api {

// Registers the routes above; `directory` (null: no GET /v1/projects), `images` (null: no GET
// /v1/containerImages) and `routes` must outlive the server.
void RegisterDirectoryRoutes(RouteTable& routes, const controller::ResourceDirectory* directory,
                             const spec::ImageCatalog* images = nullptr);

}  // namespace trainyard::api
