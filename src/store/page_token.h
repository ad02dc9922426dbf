// Keyset page tokens shared by the JobStore implementations. A token records the last job of the
// page (create time, name) and a fingerprint of the parent and filter it belongs to, so it stays
// valid while jobs are added or deleted and cannot be replayed against another query.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace trainyard::store {

struct PageCursor {
  int64_t create_us = 0;
  std::string name;
};

std::string EncodePageToken(const PageCursor& cursor, const std::string& parent,
                            const std::string& filter);
// INVALID_ARGUMENT ("pageToken: ...") when malformed or issued for another parent/filter.
StatusOr<PageCursor> DecodePageToken(const std::string& token, const std::string& parent,
                                     const std::string& filter);

}  // namespace trainyard::store
