#include "auth/token_json.h"

#include "protojson/reader.h"
#include "protojson/writer.h"

namespace trainyard::auth {
namespace {

// expireTime or ttl (a oneof, as Secret Manager's Secret has it): the expiry they give, or none.
StatusOr<std::optional<TimePoint>> ReadExpiry(const protojson::ObjectReader& r, TimePoint now) {
  if (r.Has("expireTime") && r.Has("ttl")) {
    return protojson::FieldError(r.PathOf("ttl"), "give expireTime or ttl, not both");
  }
  std::optional<TimePoint> expire;
  TY_RETURN_IF_ERROR(r.Timestamp("expireTime", &expire));
  std::optional<Duration> ttl;
  TY_RETURN_IF_ERROR(r.Duration("ttl", &ttl));
  if (ttl) expire = now + *ttl;
  return expire;
}

}  // namespace

nlohmann::json TokenToJson(const TokenInfo& t, TimePoint now) {
  return protojson::ObjectWriter()
      .String("id", t.id)
      .String("project", t.project)
      .String("role", std::string(RoleName(t.role)))
      .String("description", t.description)
      .String("owner", t.owner)
      .Timestamp("createTime", t.create_time)
      .Timestamp("expireTime", t.expire_time)
      .Timestamp("lastUseTime", t.last_use_time)
      .String("state", std::string(TokenStateName(StateAt(t, now))))
      .Build();
}

StatusOr<TokenSpec> ParseCreateTokenRequest(const nlohmann::json& body, TimePoint now) {
  TY_ASSIGN_OR_RETURN(
      protojson::ObjectReader r,
      protojson::ObjectReader::Open(
          body, "", {"project", "role", "description", "owner", "expireTime", "ttl"}, {}));
  TY_RETURN_IF_ERROR(r.Require("project", "a project id, or \"*\" for every project"));
  TY_RETURN_IF_ERROR(r.Require("role", "viewer, editor or admin"));
  TokenSpec spec;
  std::string role;
  TY_RETURN_IF_ERROR(r.String("project", &spec.project));
  TY_RETURN_IF_ERROR(r.String("role", &role));
  std::optional<Role> parsed = ParseRole(role);
  if (!parsed)
    return protojson::InvalidValueError(r.PathOf("role"), "TYPE_STRING", role,
                                        "expected viewer, editor or admin");
  spec.role = *parsed;
  TY_RETURN_IF_ERROR(r.String("description", &spec.description));
  TY_RETURN_IF_ERROR(r.String("owner", &spec.owner));
  TY_ASSIGN_OR_RETURN(spec.expire_time, ReadExpiry(r, now));
  return spec;
}

StatusOr<TimePoint> ParseUpdateTokenRequest(const nlohmann::json& body, TimePoint now) {
  TY_ASSIGN_OR_RETURN(protojson::ObjectReader r,
                      protojson::ObjectReader::Open(body, "", {"expireTime", "ttl"}, {}));
  TY_ASSIGN_OR_RETURN(std::optional<TimePoint> expire, ReadExpiry(r, now));
  if (!expire) {
    return protojson::FieldError("expireTime",
                                 "required: the new expiry, as expireTime (RFC 3339) or ttl "
                                 "(\"2592000s\", from now)");
  }
  return *expire;
}

}  // namespace trainyard::auth
