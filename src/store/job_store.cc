#include "store/job_store.h"

#include "spec/resource_name.h"

namespace trainyard::store {

Status SplitJobName(const std::string& name, std::string* parent, std::string* id) {
  TY_ASSIGN_OR_RETURN(spec::ResourceName parsed,
                      spec::ResourceName::Parse(name, spec::kCustomJobs));
  *parent = parsed.Parent();
  *id = parsed.id;
  return Status::Ok();
}

}  // namespace trainyard::store
