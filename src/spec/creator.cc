#include "spec/creator.h"

#include "protojson/reader.h"
#include "protojson/writer.h"

namespace trainyard::spec {

using nlohmann::json;

json CreatorToJson(const Creator& c) {
  protojson::ObjectWriter w;
  w.Bool("anonymous", c.anonymous)
      .String("tokenId", c.token_id)
      .String("project", c.project)
      .String("owner", c.owner)
      .String("description", c.description)
      .String("callerIp", c.caller_ip);
  return w.Build();
}

StatusOr<Creator> CreatorFromJson(const json& j, const std::string& path) {
  TY_ASSIGN_OR_RETURN(
      protojson::ObjectReader f,
      protojson::ObjectReader::Open(
          j, path, {"anonymous", "tokenId", "project", "owner", "description", "callerIp"}));
  Creator c;
  TY_RETURN_IF_ERROR(f.Bool("anonymous", &c.anonymous));
  TY_RETURN_IF_ERROR(f.String("tokenId", &c.token_id));
  TY_RETURN_IF_ERROR(f.String("project", &c.project));
  TY_RETURN_IF_ERROR(f.String("owner", &c.owner));
  TY_RETURN_IF_ERROR(f.String("description", &c.description));
  TY_RETURN_IF_ERROR(f.String("callerIp", &c.caller_ip));
  return c;
}

void SetCreator(json& resource, const Creator& creator) {
  json& info = resource["trainyardInfo"];
  if (!info.is_object()) info = json::object();
  info[kCreatorKey] = CreatorToJson(creator);
}

std::optional<Creator> CreatorOf(const json& resource) {
  if (!resource.is_object()) return std::nullopt;
  auto info = resource.find("trainyardInfo");
  if (info == resource.end() || !info->is_object()) return std::nullopt;
  auto c = info->find(kCreatorKey);
  if (c == info->end()) return std::nullopt;
  StatusOr<Creator> creator = CreatorFromJson(*c, std::string("trainyardInfo.") + kCreatorKey);
  if (!creator.ok()) return std::nullopt;
  return *creator;
}

}  // namespace trainyard::spec
