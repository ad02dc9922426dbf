// The shared resource layer's routes: a REST collection declared once (ResourceDescriptor: where
// it lives, how ids are chosen, what it answers) plus what the resource does (ResourceHandlers),
// and RegisterResourceRoutes serves all its standard methods through one implementation:
//
//   POST   {prefix}/{parent}/{collection}               create   (client-chosen id: descriptor)
//   GET    {prefix}/{parent}/{collection}               list     filter, pageSize, pageToken
//                                                               (+ orderBy, readMask if declared)
//   GET    {prefix}/{parent}/{collection}/{id}          get      (`id@version`, `id%40version`)
//   PATCH  {prefix}/{parent}/{collection}/{id}          patch    ?updateMask=a,b
//   DELETE {prefix}/{parent}/{collection}/{id}          delete   a stored done Operation
//                                                                 (controller/operation_controller.h)
//   POST   {prefix}/{parent}/{collection}/{id}:cancel   cancel   {} ({} also for an ended
//                                                                 resource where the API says so)
//   {GET|POST|DELETE} {prefix}/{parent}/{collection}[/{id}]:{verb}   the resource's custom methods
//                                                               (AIP-136: models:upload,
//                                                               models/{id}:listVersions)
//
// {parent} is "projects/{p}/locations/{l}" or, for AI Platform's API, "projects/{p}". A verb
// whose handler is unset is not served (404, as any unknown route). Every route is registered in
// the RouteTable with the descriptor's access levels, so tokens, roles and projects apply, and it
// is listed by GET /v1/routes. Rules every resource gets: unknown query parameters are 400 (as
// Google's front ends), unknown PATCH body fields are 400 (descriptor.check_patch_body), "@" in
// an id is 400 unless the descriptor is versioned, an empty create body is 400 naming the resource,
// a client-chosen id is checked before the handler runs, a duplicate is the handler's
// ALREADY_EXISTS (409), errors are google.rpc.Status bodies with field violations (http_status.h),
// handlers never throw. Every create (and custom method that writes) is handed its caller as a
// spec::Creator to record in the resource's trainyardInfo.creator (spec/creator.h), and a create's
// resource name goes to the audit log (RequestContext::created).
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "api/route_table.h"
#include "common/status.h"
#include "spec/creator.h"
#include "store/job_store.h"

namespace trainyard::controller {
class OperationController;
class StoredResourceController;
}  // namespace trainyard::controller

namespace trainyard::api {

enum class ParentShape {
  kProjectLocation,  // projects/{p}/locations/{l}/{collection}  (Vertex)
  kProject,          // projects/{p}/{collection}                 (AI Platform Training)
};

struct ResourceDescriptor {
  std::string prefix = "/v1";
  ParentShape parent = ParentShape::kProjectLocation;
  std::string collection;  // URL segment: "customJobs", "jobs", "trainingPipelines"
  std::string list_key;    // the list response's array: "" = the collection
  std::string noun;        // in messages: "CustomJob"
  // A create body's shape, for the error an empty body gets ("{\"displayName\": ...}").
  std::string create_example;
  // Client-chosen ids: the request-body field that holds the id ("jobId"; its snake_case
  // spelling is accepted too); "" = the server assigns ids. `check_id` validates it (an
  // INVALID_ARGUMENT naming the field), before the handler runs.
  std::string id_field;
  std::function<Status(const std::string& id)> check_id;
  // Extra list parameters besides filter/pageSize/pageToken ("orderBy", "readMask").
  std::vector<std::string> list_params;
  // Cancel of a resource that already ended: the handler's FAILED_PRECONDITION is answered {}
  // (AI Platform: "If the job is already finished, the command ... exit[s] successfully").
  bool cancel_of_ended_is_ok = false;
  // Non-empty: a create is a long-running operation (Vertex's endpoints): it is answered with a
  // done operation whose metadata has this "@type" and whose response is the created resource
  // with "@type" `resource_type`.
  std::string create_operation_metadata_type;
  std::string resource_type;  // "type.googleapis.com/google.cloud.aiplatform.v1.Endpoint"
  // The "@type" of a delete operation's metadata.
  std::string delete_metadata_type =
      "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata";
  auth::Access read = auth::Access::kRead;
  auth::Access write = auth::Access::kWrite;
  // Whether items have versions (models): only then may a name carry "@version" (or "%40version");
  // elsewhere "ID@x" is INVALID_ARGUMENT naming `name`, never silently the item ID.
  bool versioned = false;
  // Checks a PATCH body's keys against the resource's message (unknown names are
  // INVALID_ARGUMENT in Google's wording, protojson::UnknownFieldError), as a create body's are.
  // Required when handlers.patch is set: RegisterResourceRoutes serves no PATCH without it.
  std::function<Status(const nlohmann::json& body)> check_patch_body;

  // The list response's array key.
  const std::string& ListKey() const { return list_key.empty() ? collection : list_key; }
};

// A resource named in a request: `name` without any version, and the version or alias that
// followed '@' ("" when none).
struct ResourceId {
  std::string name;
  std::string version;
};

struct CreateCall {
  std::string parent;     // "projects/P/locations/L" or "projects/P"
  std::string body;       // the request body (non-empty), with enum names (system_params.h)
  std::string id;         // the client-chosen id (descriptor.id_field), "" when the server picks
  spec::Creator creator;  // who calls (CreatorOfCaller): the handler stores it with the resource
};

struct ListCall {
  store::ListQuery query;  // parent, filter, pageSize, pageToken
  std::string order_by;    // "" = the default order (newest first)
};

struct ListOutput {
  std::vector<nlohmann::json> items;
  std::string next_page_token;
};

struct CustomCall {
  std::string parent;  // "projects/P/locations/L" or "projects/P"
  ResourceId id;       // the resource named in the path; empty for a collection's method
  std::string body;    // the request body ("" when none), with enum names
  std::map<std::string, std::string> params;  // the declared query parameters that were sent
  spec::Creator creator;  // who calls, for a method that creates (models:upload)
  // A method that creates a resource sets its full name here, for the audit log.
  std::string* created = nullptr;
};

// What a raw custom method answers, sent as it is (rawPredict: the model's own bytes).
struct RawReply {
  int http_status = 200;
  std::string body;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
};

// A custom method (AIP-136): `{item}:{verb}`, or `{collection}:{verb}` when on_collection.
struct CustomMethod {
  std::string http_method;  // "GET", "POST" or "DELETE"
  std::string verb;         // "listVersions", "deleteVersion", "upload"
  bool on_collection = false;
  bool write = false;               // needs the descriptor's write access (else read)
  std::vector<std::string> params;  // query parameters it takes (others are 400)
  // Non-empty: the method is a long-running operation that runs inside the request, as delete
  // does: `run`'s error is the request's, its result (an object with "@type") the response of a
  // done operation stored under the parent whose metadata has this "@type".
  std::string operation_metadata_type;
  std::function<StatusOr<nlohmann::json>(const CustomCall&)> run;
  // Instead of `run`: a method whose answer is not JSON (rawPredict). It gets the request's
  // headers and content type in `headers` ("Content-Type" included); its errors are still
  // google.rpc.Status bodies.
  std::function<StatusOr<RawReply>(const CustomCall&,
                                   const std::vector<std::pair<std::string, std::string>>& headers)>
      run_raw;
};

// What the resource does, each verb as a function; an unset one is not served.
struct ResourceHandlers {
  std::function<StatusOr<nlohmann::json>(const CreateCall&)> create;
  std::function<StatusOr<nlohmann::json>(const ResourceId&)> get;
  std::function<StatusOr<ListOutput>(const ListCall&)> list;
  // Deletes the resource now (the layer wraps it in a stored operation). Its error (NOT_FOUND,
  // FAILED_PRECONDITION for a running job) is the request's.
  std::function<Status(const ResourceId&)> remove;
  // Requests cancellation. FAILED_PRECONDITION when the resource already ended.
  std::function<Status(const ResourceId&)> cancel;
  // Applies the fields of `patch` named by `update_mask` (non-empty); returns the resource.
  std::function<StatusOr<nlohmann::json>(const ResourceId&, const nlohmann::json& patch,
                                         const std::vector<std::string>& update_mask)>
      patch;
  std::vector<CustomMethod> custom;
};

// The creator of what a request served by `routes` creates, on the thread of its handler: the
// caller's token (id, project, owner, description), or {anonymous} on a server without tokens;
// with the client's address either way.
spec::Creator CreatorOfCaller(const RouteTable& routes);

// Registers the routes of `descriptor` served by `handlers`. `operations` stores the delete
// operations; it must outlive the server (required when handlers.remove is set).
void RegisterResourceRoutes(RouteTable& routes, controller::OperationController* operations,
                            const ResourceDescriptor& descriptor, ResourceHandlers handlers);

// The handlers of a resource kept by a StoredResourceController (controller/stored_resource.h):
// create, get, list (newest first; an orderBy other than that order, "create_time desc", is
// INVALID_ARGUMENT), delete, cancel where its type has a cancelled state, patch where it has
// patchable fields. `resource` must outlive the server.
ResourceHandlers StoredResourceHandlers(controller::StoredResourceController* resource);

// The default id rule of client-chosen ids (`field` names it in errors): 1 to 128 characters of
// letters, digits and '_', starting with a letter (AI Platform's jobId rule); so never '/', '.'
// or '..'.
Status CheckLetterDigitUnderscoreId(const std::string& field, const std::string& id);

// A ResourceDescriptor::check_patch_body accepting the top-level `fields` of the resource's
// message (lowerCamelCase, output-only ones included; snake_case spellings accepted) and refusing
// any other key with Google's unknown-name error at `root_label` ("model", "job").
std::function<Status(const nlohmann::json& body)> PatchBodyFields(std::string root_label,
                                                                  std::vector<std::string> fields);

// OK for "" and for the stored resources' one order spelled out ("create_time desc",
// "createTime desc"); INVALID_ARGUMENT naming orderBy otherwise.
Status CheckDefaultOrder(const std::string& order_by);

}  // namespace trainyard::api
