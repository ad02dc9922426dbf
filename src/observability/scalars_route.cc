#include "observability/scalars_route.h"

#include <httplib.h>

#include "api/route_util.h"
#include "common/bucket_path.h"
#include "spec/resource_name.h"
#include "tensorboard/scalars_reader.h"

namespace trainyard::observability {
namespace {

using nlohmann::json;

constexpr const char* kScalarsPattern =
    "/v1/projects/([^/]+)/locations/([^/]+)/customJobs/([^/:]+):scalars";

std::string WithSlash(std::string dir) {
  if (!dir.empty() && dir.back() != '/') dir += '/';
  return dir;
}

std::optional<std::string> FromArgs(const std::vector<std::string>& args) {
  const std::string flag = "--tensorboard-dir";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind(flag + "=", 0) == 0) return args[i].substr(flag.size() + 1);
    if (args[i] == flag && i + 1 < args.size()) return args[i + 1];
  }
  return std::nullopt;
}

std::optional<std::string> FromEnv(const std::vector<spec::EnvVar>& env) {
  for (const auto& e : env) {
    if (e.name == "AIP_TENSORBOARD_LOG_DIR" && !e.value.empty()) return e.value;
  }
  return std::nullopt;
}

json SeriesJson(const tensorboard::ScalarSeries& s) {
  json points = json::array();
  for (const auto& p : s.points) {
    // JSON has no NaN/Inf: a diverged loss is sent as null so the chart shows a gap.
    auto finite = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    points.push_back(json::array({p.step, finite(p.wall_time), finite(p.value)}));
  }
  return json{{"run", s.run}, {"tag", s.tag}, {"points", std::move(points)}};
}

}  // namespace

std::optional<std::string> TensorBoardLogDir(const spec::CustomJob& job) {
  if (!job.job_spec.base_output_directory.empty()) {
    return WithSlash(job.job_spec.base_output_directory) + "logs/";
  }
  if (job.job_spec.worker_pool_specs.empty()) return std::nullopt;
  const spec::WorkerPoolSpec& pool = job.job_spec.worker_pool_specs[0];
  if (pool.container_spec) {
    if (auto dir = FromEnv(pool.container_spec->env)) return dir;
    if (auto dir = FromArgs(pool.container_spec->args)) return dir;
  }
  if (pool.python_package_spec) {
    if (auto dir = FromEnv(pool.python_package_spec->env)) return dir;
    if (auto dir = FromArgs(pool.python_package_spec->args)) return dir;
  }
  return std::nullopt;
}

// A gs:// log dir is read beneath the bucket root (links a job planted are never followed); a
// local path as the operator's.
StatusOr<tensorboard::ScalarsPage> ReadLogDir(const std::string& dir, const std::string& cursor) {
  if (!IsGcsUri(dir)) return tensorboard::ReadScalars(std::filesystem::path(dir), cursor);
  TY_ASSIGN_OR_RETURN(GcsUri uri, ParseGcsUri(dir));
  std::string rel = uri.bucket;
  if (!uri.object.empty()) rel += "/" + uri.object;
  while (rel.ends_with('/')) rel.pop_back();
  auto root = BeneathDir::Open(BucketRoot());
  if (!root.ok()) return tensorboard::ReadScalars(BucketRoot() / rel, cursor);  // empty page
  return tensorboard::ReadScalars(*root, rel, cursor);
}

void RegisterScalarsRoute(api::RouteTable& routes, controller::JobController* controller) {
  routes.Get(kScalarsPattern, auth::Access::kRead,
             api::Guarded([controller](const httplib::Request& req) -> StatusOr<json> {
               TY_RETURN_IF_ERROR(api::CheckParams(req, {"after"}));
               const std::string name = spec::ResourceName::Of({req.matches[1], req.matches[2]},
                                                               spec::kCustomJobs, req.matches[3])
                                            .ToString();
               TY_ASSIGN_OR_RETURN(spec::CustomJob job, controller->Get(name));
               json out{{"jobState", std::string(spec::JobStateName(job.state))},
                        {"series", json::array()},
                        {"warnings", json::array()},
                        {"more", false}};
               const std::optional<std::string> dir = TensorBoardLogDir(job);
               if (!dir) {
                 out["logDir"] = nullptr;
                 out["nextCursor"] = req.get_param_value("after");
                 return out;
               }
               out["logDir"] = *dir;
               TY_ASSIGN_OR_RETURN(tensorboard::ScalarsPage page,
                                   ReadLogDir(*dir, req.get_param_value("after")));
               for (const auto& s : page.series) out["series"].push_back(SeriesJson(s));
               out["warnings"] = page.warnings;
               out["more"] = page.more;
               out["nextCursor"] = page.next_cursor;
               return out;
             }));
}

}  // namespace trainyard::observability
