// Moved to common/time.h. This header only re-exports it under trainyard::spec for src/study
// until that folder includes common/time.h; new code includes common/time.h.
#pragma once

#include "common/time.h"

namespace trainyard::spec {

using ::trainyard::FormatTimestamp;
using ::trainyard::FromUnixMicros;
using ::trainyard::ParseTimestamp;
using ::trainyard::ToUnixMicros;

}  // namespace trainyard::spec
