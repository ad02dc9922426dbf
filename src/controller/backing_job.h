// What the resources run by one backing CustomJob share (TrainingPipelineController,
// BatchPredictionController): the crash-safe start of that job and which errors are the
// request's.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "controller/job_controller.h"
#include "spec/creator.h"
#include "spec/custom_job.h"

namespace trainyard::controller {

// Errors that are the request's (a job or upload the server refuses: INVALID_ARGUMENT,
// NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION, PERMISSION_DENIED), which end the resource
// FAILED; any other is passing (the store, I/O) and the next poll pass retries.
bool IsRefusal(const Status& s);

// The backing job of the resource `id` under `parent`: the oldest job labelled `label`=`id` (one
// created just before a crash is adopted, never created twice), else `request` created with
// `creator` as its trainyardInfo.creator. The JobController's error otherwise (IsRefusal tells
// whether it is the request's).
StatusOr<spec::CustomJob> AdoptOrCreateBackingJob(JobController* jobs, const std::string& parent,
                                                  const std::string& label, const std::string& id,
                                                  spec::CustomJob request,
                                                  const std::optional<spec::Creator>& creator);

// "projects/P/locations/L" of a resource name ".../<collection>/ID" and its last segment.
std::string ResourceParentOf(const std::string& name, const std::string& collection);
std::string ResourceIdOf(const std::string& name);

}  // namespace trainyard::controller
