// Looking programs up in $PATH, as a shell does, without running them.
#pragma once

#include <string>

namespace trainyard {

// Whether an executable file `program` (a bare name, no '/') is in one of $PATH's directories;
// false when $PATH is unset.
bool OnPath(const std::string& program);

}  // namespace trainyard
