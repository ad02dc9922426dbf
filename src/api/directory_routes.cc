#include "api/directory_routes.h"

#include "api/machine_listing.h"
#include "api/route_util.h"
#include "controller/resource_directory.h"
#include "spec/image_catalog.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

json CallerJson(const std::optional<auth::Principal>& who) {
  if (!who) {
    return {{"authentication", false},
            {"project", "*"},
            {"role", "admin"},
            {"access", {{"read", true}, {"write", true}, {"admin", true}}}};
  }
  auto reaches = [&](auth::Role role) {
    return static_cast<int>(who->role) >= static_cast<int>(role);
  };
  return {{"authentication", true},
          {"tokenId", who->token_id},
          {"project", who->project},
          {"role", std::string(auth::RoleName(who->role))},
          {"access",
           {{"read", true},
            {"write", reaches(auth::Role::kEditor)},
            {"admin", reaches(auth::Role::kAdmin)}}}};
}

json ProjectsJson(const std::vector<controller::ProjectSummary>& projects) {
  json out = json::array();
  for (const controller::ProjectSummary& p : projects) {
    json locations = json::array();
    for (const controller::LocationSummary& l : p.locations) {
      locations.push_back({{"locationId", l.location},
                           {"name", "projects/" + p.project + "/locations/" + l.location},
                           {"resourceCounts", l.counts}});
    }
    out.push_back({{"projectId", p.project}, {"locations", std::move(locations)}});
  }
  return {{"projects", std::move(out)}};
}

}  // namespace

void RegisterDirectoryRoutes(RouteTable& routes, const controller::ResourceDirectory* directory,
                             const spec::ImageCatalog* images) {
  using auth::Access;
  routes.Get("/v1/caller", Access::kRead,
             Guarded([&routes](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {}));
               TY_ASSIGN_OR_RETURN(std::optional<auth::Principal> who, routes.Caller(req));
               return CallerJson(who);
             }));
  routes.Get("/v1/machineTypes", Access::kRead,
             Guarded([](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {}));
               return MachineCatalogListing();
             }));
  if (images != nullptr) {
    routes.Get("/v1/containerImages", Access::kRead,
               Guarded([images](const httplib::Request& req) -> StatusOr<json> {
                 TY_RETURN_IF_ERROR(CheckParams(req, {}));
                 json out = json::array();
                 for (const auto& s : images->Suggestions()) {
                   out.push_back(
                       {{"imageUri", s.image_uri}, {"description", s.description}, {"use", s.use}});
                 }
                 return json{{"containerImages", std::move(out)}};
               }));
  }
  if (directory == nullptr) return;
  routes.Get("/v1/projects", Access::kRead,
             Guarded([&routes, directory](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(CheckParams(req, {}));
               TY_ASSIGN_OR_RETURN(std::optional<auth::Principal> who, routes.Caller(req));
               TY_ASSIGN_OR_RETURN(std::vector<controller::ProjectSummary> projects,
                                   directory->Projects(who ? who->project : "*"));
               return ProjectsJson(projects);
             }));
}

}  // namespace trainyard::api
