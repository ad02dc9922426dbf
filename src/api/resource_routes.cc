#include "api/resource_routes.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>

#include "api/route_util.h"
#include "controller/operation_controller.h"
#include "controller/stored_resource.h"
#include "machines/regions.h"
#include "protojson/parse.h"
#include "protojson/reader.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

// How a descriptor's URLs look and how a request's captures become names.
class Paths {
 public:
  explicit Paths(const ResourceDescriptor& d)
      : prefix_(d.prefix),
        parent_(d.parent),
        collection_(d.collection),
        noun_(d.noun),
        versioned_(d.versioned) {}

  std::string Collection() const {
    const char* parent = parent_ == ParentShape::kProject ? "/projects/([^/]+)/"
                                                          : "/projects/([^/]+)/locations/([^/]+)/";
    return prefix_ + parent + collection_;
  }
  std::string Item() const { return Collection() + "/([^/:]+)"; }

  std::string Parent(const httplib::Request& req) const {
    std::string p = "projects/" + std::string(req.matches[1]);
    if (parent_ == ParentShape::kProjectLocation) p += "/locations/" + std::string(req.matches[2]);
    return p;
  }
  // The item's name and the version after '@' (decoded from %40 where a client left it encoded).
  // INVALID_ARGUMENT for a version of a resource that has none, or an empty one.
  StatusOr<ResourceId> Id(const httplib::Request& req) const {
    std::string id = req.matches[parent_ == ParentShape::kProject ? 2 : 3];
    if (size_t enc = id.find("%40"); enc != std::string::npos) id.replace(enc, 3, "@");
    ResourceId out;
    if (size_t at = id.find('@'); at != std::string::npos) {
      if (!versioned_) {
        return InvalidFieldError("name", protojson::Brief(json(id)) + " is not a " + noun_ +
                                             " id: " + noun_ +
                                             "s have no versions, so '@' names nothing");
      }
      out.version = id.substr(at + 1);
      id.resize(at);
      if (out.version.empty()) {
        return InvalidFieldError("name", "'" + id + "@' names no version; use " + id +
                                             "@VERSION_ID or " + id + "@ALIAS");
      }
    }
    out.name = Parent(req) + "/" + collection_ + "/" + id;
    return out;
  }

 private:
  std::string prefix_;
  ParentShape parent_;
  std::string collection_;
  std::string noun_;
  bool versioned_;
};

// The client-chosen id in a create body: the descriptor's field in either spelling.
StatusOr<std::string> ClientId(const ResourceDescriptor& d, const std::string& body) {
  StatusOr<json> parsed = protojson::ParseJson(body);
  if (!parsed.ok() || !parsed->is_object()) return std::string();  // the codec reports it
  const std::string snake = protojson::CamelToSnake(d.id_field);
  for (const std::string& key : {d.id_field, snake}) {
    auto it = parsed->find(key);
    if (it == parsed->end() || it->is_null()) continue;
    TY_ASSIGN_OR_RETURN(std::string id, protojson::ReadString(*it, d.id_field));
    if (d.check_id) TY_RETURN_IF_ERROR(d.check_id(id));
    return id;
  }
  return InvalidFieldError(d.id_field, "required: the id of the new " + d.noun);
}

std::vector<std::string> SplitMask(const std::string& mask) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= mask.size()) {
    size_t comma = mask.find(',', start);
    if (comma == std::string::npos) comma = mask.size();
    std::string part = mask.substr(start, comma - start);
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    if (!part.empty()) out.push_back(part);
    start = comma + 1;
  }
  return out;
}

// A resource that is not in the region asked for may be in another (a --region left out or
// mistyped): the NOT_FOUND names where it is. Only a miss pays for the extra lookups.
Status InOtherRegions(const Status& not_found, const ResourceId& id,
                      const std::function<StatusOr<json>(const ResourceId&)>& get) {
  constexpr std::string_view kLocations = "/locations/";
  const size_t start = id.name.find(kLocations);
  if (start == std::string::npos) return not_found;
  const size_t from = start + kLocations.size();
  const size_t end = id.name.find('/', from);
  if (end == std::string::npos) return not_found;
  const std::string asked = id.name.substr(from, end - from);
  for (const std::string& region : machines::KnownRegions()) {
    if (region == asked) continue;
    ResourceId other = id;
    other.name = id.name.substr(0, from) + region + id.name.substr(end);
    if (get(other).ok()) {
      return Status(StatusCode::kNotFound, not_found.message() + "; it is in region " + region +
                                               ": " + other.name + " (pass --region=" + region +
                                               ")");
    }
  }
  return not_found;
}

void RegisterCreate(RouteTable& routes, controller::OperationController* operations,
                    const ResourceDescriptor& d, const ResourceHandlers& h) {
  if (!h.create) return;
  Paths paths(d);
  routes.Post(paths.Collection(), d.write,
              Guarded([d, paths, &routes, operations,
                       create = h.create](const httplib::Request& req) -> StatusOr<json> {
                TY_RETURN_IF_ERROR(CheckParams(req, {}));
                if (req.body.empty()) {
                  return InvalidArgumentError("request body is empty; send a " + d.noun +
                                              " as JSON, e.g. " + d.create_example);
                }
                CreateCall call{paths.Parent(req), req.body, "", CreatorOfCaller(routes)};
                if (!d.id_field.empty()) {
                  TY_ASSIGN_OR_RETURN(call.id, ClientId(d, req.body));
                }
                auto run = [&]() -> StatusOr<json> {
                  TY_ASSIGN_OR_RETURN(json created, create(call));
                  if (RequestContext* context = routes.CurrentContext()) {
                    // AI Platform's Job shows no name, only the jobId the client chose.
                    context->created = created.value("name", "");
                    if (context->created.empty() && !call.id.empty()) {
                      context->created = call.parent + "/" + d.collection + "/" + call.id;
                    }
                  }
                  return created;
                };
                if (d.create_operation_metadata_type.empty()) return run();
                controller::OperationStart start{call.parent, d.create_operation_metadata_type, {}};
                return operations->RunNow(start, [&]() -> StatusOr<json> {
                  TY_ASSIGN_OR_RETURN(json created, run());
                  json response = {{"@type", d.resource_type}};
                  response.update(created);
                  return response;
                });
              }));
}

void RegisterList(RouteTable& routes, const ResourceDescriptor& d, const ResourceHandlers& h) {
  if (!h.list) return;
  Paths paths(d);
  routes.Get(paths.Collection(), d.read,
             Guarded([d, paths, list = h.list](const httplib::Request& req) -> StatusOr<json> {
               std::vector<std::string> known = {"filter", "pageSize", "pageToken"};
               known.insert(known.end(), d.list_params.begin(), d.list_params.end());
               TY_RETURN_IF_ERROR(CheckParams(req, known));
               ListCall call;
               call.query.parent = paths.Parent(req);
               call.query.filter = req.get_param_value("filter");
               TY_ASSIGN_OR_RETURN(int64_t size, IntParam(req, "pageSize", 0, 0, 1 << 30));
               call.query.page_size = static_cast<int>(size);
               call.query.page_token = req.get_param_value("pageToken");
               call.order_by = req.get_param_value("orderBy");
               TY_ASSIGN_OR_RETURN(ListOutput out, list(call));
               return ListResponse(d.ListKey().c_str(), out.items, out.next_page_token,
                                   [](const json& j) { return j; });
             }));
}

void RegisterItemVerbs(RouteTable& routes, controller::OperationController* operations,
                       const ResourceDescriptor& d, const ResourceHandlers& h) {
  Paths paths(d);
  if (h.get) {
    const bool located = d.parent == ParentShape::kProjectLocation;
    routes.Get(
        paths.Item(), d.read,
        Guarded([paths, located, get = h.get](const httplib::Request& req) -> StatusOr<json> {
          TY_RETURN_IF_ERROR(CheckParams(req, {}));
          TY_ASSIGN_OR_RETURN(ResourceId id, paths.Id(req));
          StatusOr<json> got = get(id);
          if (got.ok() || !located || got.status().code() != StatusCode::kNotFound) {
            return got;
          }
          return InOtherRegions(got.status(), id, get);
        }));
  }
  if (h.patch && d.check_patch_body) {
    routes.Patch(
        paths.Item(), d.write,
        Guarded([paths, d, patch = h.patch](const httplib::Request& req) -> StatusOr<json> {
          TY_RETURN_IF_ERROR(CheckParams(req, {"updateMask"}));
          const std::vector<std::string> mask = SplitMask(req.get_param_value("updateMask"));
          if (mask.empty()) {
            return InvalidFieldError("updateMask",
                                     "required: the comma-separated fields to change, "
                                     "e.g. ?updateMask=labels");
          }
          TY_ASSIGN_OR_RETURN(json body, protojson::ParseJson(req.body));
          if (!body.is_object()) {
            return InvalidArgumentError("Invalid JSON payload received: expected an object");
          }
          TY_RETURN_IF_ERROR(d.check_patch_body(body));
          TY_ASSIGN_OR_RETURN(ResourceId id, paths.Id(req));
          return patch(id, body, mask);
        }));
  }
  if (h.remove) {
    routes.Delete(paths.Item(), d.write,
                  Guarded([d, paths, operations,
                           remove = h.remove](const httplib::Request& req) -> StatusOr<json> {
                    TY_RETURN_IF_ERROR(CheckParams(req, {}));
                    TY_ASSIGN_OR_RETURN(const ResourceId id, paths.Id(req));
                    controller::OperationStart start{paths.Parent(req), d.delete_metadata_type, {}};
                    return operations->RunNow(start, [&]() -> StatusOr<json> {
                      TY_RETURN_IF_ERROR(remove(id));
                      return json{{"@type", controller::kEmptyResponse}};
                    });
                  }));
  }
  if (h.cancel) {
    routes.Post(
        paths.Item() + ":cancel", d.write,
        Guarded([d, paths, cancel = h.cancel](const httplib::Request& req) -> StatusOr<json> {
          TY_RETURN_IF_ERROR(CheckParams(req, {}));
          TY_RETURN_IF_ERROR(CheckEmptyBody(req));
          TY_ASSIGN_OR_RETURN(ResourceId id, paths.Id(req));
          Status s = cancel(id);
          if (s.code() == StatusCode::kFailedPrecondition && d.cancel_of_ended_is_ok) {
            return json::object();
          }
          TY_RETURN_IF_ERROR(s);
          return json::object();
        }));
  }
}

// The call a custom method's request makes.
StatusOr<CustomCall> CallOf(const Paths& paths, const CustomMethod& m, RouteTable& routes,
                            const httplib::Request& req) {
  TY_RETURN_IF_ERROR(CheckParams(req, m.params));
  RequestContext* context = routes.CurrentContext();
  CustomCall call{paths.Parent(req),
                  {},
                  req.body,
                  {},
                  CreatorOfCaller(routes),
                  context ? &context->created : nullptr};
  if (!m.on_collection) {
    TY_ASSIGN_OR_RETURN(call.id, paths.Id(req));
  }
  for (const std::string& p : m.params) {
    if (req.has_param(p)) call.params[p] = req.get_param_value(p);
  }
  return call;
}

// A run_raw method's handler: its reply as it is, errors as google.rpc.Status bodies.
httplib::Server::Handler RawHandler(const Paths& paths, const CustomMethod& m, RouteTable& routes) {
  return [paths, m, &routes](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 413) return;  // body over the limit, read only to answer (api_server.cc)
    try {
      StatusOr<CustomCall> call = CallOf(paths, m, routes, req);
      if (!call.ok()) return SendError(res, call.status());
      const std::vector<std::pair<std::string, std::string>> headers(req.headers.begin(),
                                                                     req.headers.end());
      StatusOr<RawReply> reply = m.run_raw(*call, headers);
      if (!reply.ok()) return SendError(res, reply.status());
      res.status = reply->http_status;
      for (const auto& [k, v] : reply->headers) res.set_header(k, v);
      res.set_content(reply->body, reply->content_type.empty() ? "application/octet-stream"
                                                               : reply->content_type);
    } catch (const std::exception& e) {
      SendError(res, InternalError(std::string("internal error: ") + e.what()));
    }
  };
}

// The path of a custom method and the call it makes.
void RegisterCustom(RouteTable& routes, controller::OperationController* operations,
                    const ResourceDescriptor& d, const CustomMethod& m) {
  Paths paths(d);
  const std::string pattern = (m.on_collection ? paths.Collection() : paths.Item()) + ":" + m.verb;
  httplib::Server::Handler handler =
      m.run_raw
          ? RawHandler(paths, m, routes)
          : Guarded([paths, m, operations, &routes](const httplib::Request& req) -> StatusOr<json> {
              TY_ASSIGN_OR_RETURN(CustomCall call, CallOf(paths, m, routes, req));
              if (m.operation_metadata_type.empty()) return m.run(call);
              controller::OperationStart start{call.parent, m.operation_metadata_type, {}};
              return operations->RunNow(start, [&] { return m.run(call); });
            });
  const auth::Access access = m.write ? d.write : d.read;
  if (m.http_method == "GET") {
    routes.Get(pattern, access, handler);
  } else if (m.http_method == "DELETE") {
    routes.Delete(pattern, access, handler);
  } else {
    routes.Post(pattern, access, handler);
  }
}

}  // namespace

spec::Creator CreatorOfCaller(const RouteTable& routes) {
  spec::Creator c;
  const RequestContext* context = routes.CurrentContext();
  if (context != nullptr) c.caller_ip = context->remote_addr;
  if (context == nullptr || !context->caller) {
    c.anonymous = true;
    return c;
  }
  const auth::Principal& who = *context->caller;
  c.token_id = who.token_id;
  c.project = who.project;
  c.owner = who.owner;
  c.description = who.description;
  return c;
}

void RegisterResourceRoutes(RouteTable& routes, controller::OperationController* operations,
                            const ResourceDescriptor& descriptor, ResourceHandlers handlers) {
  RegisterCreate(routes, operations, descriptor, handlers);
  RegisterList(routes, descriptor, handlers);
  RegisterItemVerbs(routes, operations, descriptor, handlers);
  for (const CustomMethod& m : handlers.custom) RegisterCustom(routes, operations, descriptor, m);
}

ResourceHandlers StoredResourceHandlers(controller::StoredResourceController* r) {
  ResourceHandlers h;
  h.create = [r](const CreateCall& call) {
    return r->Create(call.parent, call.body, call.id, call.creator);
  };
  h.get = [r](const ResourceId& id) { return r->Get(id.name); };
  h.list = [r](const ListCall& call) -> StatusOr<ListOutput> {
    TY_RETURN_IF_ERROR(CheckDefaultOrder(call.order_by));
    TY_ASSIGN_OR_RETURN(store::ResourcePage page, r->List(call.query));
    ListOutput out{{}, page.next_page_token};
    for (const auto& record : page.jobs) out.items.push_back(record.body);
    return out;
  };
  h.remove = [r](const ResourceId& id) { return r->Delete(id.name); };
  if (!r->type().cancelled_state.empty()) {
    h.cancel = [r](const ResourceId& id) { return r->Cancel(id.name); };
  }
  if (!r->type().patchable.empty()) {
    h.patch = [r](const ResourceId& id, const json& patch, const std::vector<std::string>& mask) {
      return r->Patch(id.name, patch, mask);
    };
  }
  return h;
}

std::function<Status(const json& body)> PatchBodyFields(std::string root_label,
                                                        std::vector<std::string> fields) {
  return [root_label = std::move(root_label), fields = std::move(fields)](const json& body) {
    for (const auto& [key, value] : body.items()) {
      if (std::find(fields.begin(), fields.end(), protojson::SnakeToCamel(key)) == fields.end()) {
        return protojson::UnknownFieldError(root_label, key);
      }
    }
    return Status::Ok();
  };
}

Status CheckDefaultOrder(const std::string& order_by) {
  std::string spaced;  // single spaces, no leading or trailing ones
  for (char c : order_by) {
    if (c != ' ' || (!spaced.empty() && spaced.back() != ' ')) spaced += c;
  }
  while (!spaced.empty() && spaced.back() == ' ') spaced.pop_back();
  if (spaced.empty() || spaced == "create_time desc" || spaced == "createTime desc") {
    return Status::Ok();
  }
  return InvalidFieldError("orderBy", protojson::Brief(json(order_by)) +
                                          " is not supported; lists are newest first "
                                          "(\"create_time desc\"), the only order served");
}

Status CheckLetterDigitUnderscoreId(const std::string& field, const std::string& id) {
  bool ok = !id.empty() && id.size() <= 128 && std::isalpha(static_cast<unsigned char>(id[0]));
  for (char c : id) ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  if (ok) return Status::Ok();
  return InvalidFieldError(field, protojson::Brief(json(id)) +
                                      " is not a valid id: use 1 to 128 letters, digits and "
                                      "underscores, starting with a letter");
}

}  // namespace trainyard::api
