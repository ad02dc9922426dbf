#include "controller/backing_job.h"

namespace trainyard::controller {

bool IsRefusal(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kPermissionDenied:
      return true;
    default:
      return false;
  }
}

StatusOr<spec::CustomJob> AdoptOrCreateBackingJob(JobController* jobs, const std::string& parent,
                                                  const std::string& label, const std::string& id,
                                                  spec::CustomJob request,
                                                  const std::optional<spec::Creator>& creator) {
  store::ListQuery query;
  query.parent = parent;
  query.filter = "labels." + label + "=\"" + id + "\"";
  TY_ASSIGN_OR_RETURN(store::ListResult found, jobs->List(query));
  if (!found.jobs.empty()) return found.jobs.back();  // the oldest
  if (creator) {
    request.trainyard_info = spec::TrainyardInfo{};
    request.trainyard_info->creator = creator;
  }
  return jobs->Create(parent, request);
}

std::string ResourceParentOf(const std::string& name, const std::string& collection) {
  return name.substr(0, name.rfind("/" + collection + "/"));
}

std::string ResourceIdOf(const std::string& name) { return name.substr(name.rfind('/') + 1); }

}  // namespace trainyard::controller
