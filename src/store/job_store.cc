#include "store/job_store.h"

namespace trainyard::store {

Status SplitJobName(const std::string& name, std::string* parent, std::string* id) {
  // projects/P/locations/L/customJobs/ID
  size_t pos = 0;
  std::vector<std::string> parts;
  while (pos <= name.size()) {
    size_t slash = name.find('/', pos);
    if (slash == std::string::npos) slash = name.size();
    parts.push_back(name.substr(pos, slash - pos));
    pos = slash + 1;
  }
  if (parts.size() != 6 || parts[0] != "projects" || parts[2] != "locations" ||
      parts[4] != "customJobs" || parts[1].empty() || parts[3].empty() || parts[5].empty()) {
    return InvalidArgumentError("'" + name +
                                "' is not a job name; expected "
                                "projects/PROJECT/locations/LOCATION/customJobs/ID");
  }
  *parent = "projects/" + parts[1] + "/locations/" + parts[3];
  *id = parts[5];
  return Status::Ok();
}

}  // namespace trainyard::store
