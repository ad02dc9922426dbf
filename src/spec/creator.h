// Who created a resource through the API: Trainyard's output-only `trainyardInfo.creator`,
// recorded once at create, stored with the resource (so it survives restarts) and never changed.
// Every resource created through the shared resource layer (api/resource_routes.h) has one: custom
// jobs, HP-tuning jobs, training pipelines, models and AI Platform jobs; the jobs and models
// those start on their own (trials, a pipeline's job and model, a legacy job's backing job) carry
// their parent's. Resources stored before creators were recorded have none.
//
// JSON (docs/api.md):
//   with tokens:    {"tokenId": "0123456789abcdef", "project": "p1", "owner": "ana@example.com",
//                    "description": "CI", "callerIp": "10.0.0.7"}   (owner, description: when set)
//   without tokens: {"anonymous": true, "callerIp": "127.0.0.1"}     (--no-auth: anybody who
//                    could reach the server; the address is all there is to tell who)
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"

namespace trainyard::spec {

struct Creator {
  bool anonymous = false;   // the server ran without tokens
  std::string token_id;     // the calling token's id ("" when anonymous)
  std::string project;      // that token's project ("*": an operator's token)
  std::string owner;        // that token's owner, "" when it has none
  std::string description;  // what that token is for, "" when not given
  std::string caller_ip;    // the client's address as the server saw it
};

nlohmann::json CreatorToJson(const Creator& creator);
// INVALID_ARGUMENT naming the field under `path` for a malformed one (unknown keys included).
StatusOr<Creator> CreatorFromJson(const nlohmann::json& j, const std::string& path);

// The key of the creator inside a resource's "trainyardInfo".
inline constexpr const char* kCreatorKey = "creator";

// Sets resource["trainyardInfo"]["creator"] (a resource kept as JSON: pipelines, models, AI
// Platform jobs), replacing whatever a client sent there.
void SetCreator(nlohmann::json& resource, const Creator& creator);
// The creator stored in resource["trainyardInfo"]; nullopt when it has none or it is malformed.
std::optional<Creator> CreatorOf(const nlohmann::json& resource);

}  // namespace trainyard::spec
