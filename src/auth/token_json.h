// The JSON of the token API (/trainyard/v1/tokens, api/auth_routes.h), in one place: a token as
// the API shows it (never its secret or hash) and the bodies of create and update requests, in
// the proto3-JSON rules and error wording of protojson/reader.h.
//
// Token:   {"id", "project", "role": "viewer"|"editor"|"admin", "description", "owner",
//           "createTime", "expireTime", "lastUseTime" (RFC 3339), "state": "ACTIVE"|"EXPIRED"|
//           "REVOKED"}; empty fields are left out.
// Create:  {"project" (required), "role" (required), "description", "owner",
//           "expireTime" (RFC 3339) | "ttl" ("2592000s", from now)}: neither = until revoked.
// Update:  {"expireTime" | "ttl"}: exactly one; the new expiry (ttl counts from now).
#pragma once

#include <nlohmann/json.hpp>

#include "auth/token_store.h"

namespace trainyard::auth {

// The token as the API shows it at `now` (state depends on the time).
nlohmann::json TokenToJson(const TokenInfo& token, TimePoint now);

// A create request. INVALID_ARGUMENT naming the field: unknown fields, a missing project or role,
// a role other than viewer/editor/admin, both expireTime and ttl, malformed times. The values'
// own rules (project id, lengths, a future expiry) are TokenStore::Create's.
StatusOr<TokenSpec> ParseCreateTokenRequest(const nlohmann::json& body, TimePoint now);

// An update request: the new expiry. INVALID_ARGUMENT naming the field as above, and when neither
// expireTime nor ttl is given.
StatusOr<TimePoint> ParseUpdateTokenRequest(const nlohmann::json& body, TimePoint now);

}  // namespace trainyard::auth
