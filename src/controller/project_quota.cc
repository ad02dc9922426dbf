#include "controller/project_quota.h"

#include <cstdio>
#include <vector>

#include "common/file_util.h"
#include "protojson/parse.h"
#include "protojson/reader.h"

namespace trainyard::controller {
namespace {

using nlohmann::json;

// "8", "2.5": quotas are whole numbers mostly; no trailing zeros.
std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// One limit of a quota against a use and a demand, for both checks.
struct Limit {
  std::string what;  // "vCPUs", "GiB of memory", "NVIDIA_TESLA_T4 GPUs", "concurrent jobs"
  double limit;
  double used;
  double asked;
};

std::vector<Limit> LimitsOf(const ProjectQuota& q, const ResourceAmount& used,
                            const ResourceAmount& demand) {
  std::vector<Limit> out;
  if (q.concurrent_jobs) {
    out.push_back({"concurrent jobs", static_cast<double>(*q.concurrent_jobs),
                   static_cast<double>(used.jobs), static_cast<double>(demand.jobs)});
  }
  if (q.vcpus) out.push_back({"vCPUs", *q.vcpus, used.vcpus, demand.vcpus});
  if (q.memory_gib)
    out.push_back({"GiB of memory", *q.memory_gib, used.memory_gib, demand.memory_gib});
  for (const auto& [type, limit] : q.gpus) {
    auto u = used.gpus.find(type);
    auto d = demand.gpus.find(type);
    out.push_back({type + " GPUs", static_cast<double>(limit),
                   u == used.gpus.end() ? 0.0 : u->second,
                   d == demand.gpus.end() ? 0.0 : d->second});
  }
  return out;
}

// Sums of fractional vCPUs: a job of exactly the free amount fits.
constexpr double kEps = 1e-9;

StatusOr<double> NonNegative(const json& v, const std::string& path) {
  TY_ASSIGN_OR_RETURN(double d, protojson::ReadDouble(v, path));
  if (!(d >= 0)) return protojson::FieldError(path, "must be a number >= 0");
  return d;
}

}  // namespace

void ResourceAmount::Add(const ResourceAmount& other) {
  vcpus += other.vcpus;
  memory_gib += other.memory_gib;
  for (const auto& [type, n] : other.gpus) gpus[type] += n;
  jobs += other.jobs;
}

void ResourceAmount::Subtract(const ResourceAmount& other) {
  vcpus -= other.vcpus;
  memory_gib -= other.memory_gib;
  for (const auto& [type, n] : other.gpus) {
    if ((gpus[type] -= n) <= 0) gpus.erase(type);
  }
  jobs -= other.jobs;
}

StatusOr<ProjectQuota> ProjectQuotaFromJson(const json& j) {
  TY_ASSIGN_OR_RETURN(auto f, protojson::ObjectReader::Open(
                                  j, "", {"vcpus", "memoryGib", "gpus", "concurrentJobs", "weight"},
                                  {}, "ProjectQuota"));
  ProjectQuota q;
  if (const json* v = f.Get("vcpus")) {
    TY_ASSIGN_OR_RETURN(q.vcpus, NonNegative(*v, "vcpus"));
  }
  if (const json* v = f.Get("memoryGib")) {
    TY_ASSIGN_OR_RETURN(q.memory_gib, NonNegative(*v, "memoryGib"));
  }
  if (const json* v = f.Get("concurrentJobs")) {
    TY_ASSIGN_OR_RETURN(int32_t n, protojson::ReadInt32(*v, "concurrentJobs"));
    if (n < 0) return protojson::FieldError("concurrentJobs", "must be >= 0");
    q.concurrent_jobs = n;
  }
  if (const json* v = f.Get("gpus")) {
    if (!v->is_object()) return protojson::InvalidValueError("gpus", "map<string, int32>", *v);
    for (const auto& [type, n] : v->items()) {
      TY_ASSIGN_OR_RETURN(int32_t count, protojson::ReadInt32(n, "gpus." + type));
      if (count < 0) return protojson::FieldError("gpus." + type, "must be >= 0");
      q.gpus[type] = count;
    }
  }
  if (const json* v = f.Get("weight")) {
    TY_ASSIGN_OR_RETURN(q.weight, protojson::ReadDouble(*v, "weight"));
    if (!(q.weight > 0)) return protojson::FieldError("weight", "must be a number > 0 (default 1)");
  }
  return q;
}

json ProjectQuotaToJson(const ProjectQuota& q) {
  json j = json::object();
  if (q.vcpus) j["vcpus"] = *q.vcpus;
  if (q.memory_gib) j["memoryGib"] = *q.memory_gib;
  if (!q.gpus.empty()) j["gpus"] = q.gpus;
  if (q.concurrent_jobs) j["concurrentJobs"] = *q.concurrent_jobs;
  j["weight"] = q.weight;
  return j;
}

json ResourceAmountToJson(const ResourceAmount& a) {
  json j = {{"vcpus", a.vcpus}, {"memoryGib", a.memory_gib}, {"jobs", a.jobs}};
  j["gpus"] = a.gpus.empty() ? json::object() : json(a.gpus);
  return j;
}

std::string Shortfall(const std::string& project, const ProjectQuota& quota,
                      const ResourceAmount& used, const ResourceAmount& demand) {
  for (const Limit& l : LimitsOf(quota, used, demand)) {
    if (l.asked <= 0 || l.used + l.asked <= l.limit + kEps) continue;
    return "held: project " + project + " is using " + Num(l.used) + " of its " + Num(l.limit) +
           " " + l.what + " quota and the job asks for " + Num(l.asked) +
           "; it starts when the project's jobs free enough or an admin raises the quota";
  }
  return "";
}

Status CheckWithinQuota(const std::string& project, const ProjectQuota& quota,
                        const ResourceAmount& demand) {
  for (const Limit& l : LimitsOf(quota, ResourceAmount{}, demand)) {
    if (l.asked <= l.limit + kEps) continue;
    return Status(StatusCode::kResourceExhausted,
                  "the job asks for " + Num(l.asked) + " " + l.what + " but project " + project +
                      "'s whole quota is " + Num(l.limit) + " " + l.what +
                      "; ask an admin to raise it (trainyard admin quota set " + project +
                      ") or request fewer");
  }
  return Status::Ok();
}

QuotaBook::QuotaBook(std::filesystem::path file) : file_(std::move(file)) {}

Status QuotaBook::Load() {
  if (file_.empty() || !std::filesystem::exists(file_)) return Status::Ok();
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(file_));
  TY_ASSIGN_OR_RETURN(json j, protojson::ParseJson(text));
  if (!j.is_object()) {
    return InvalidArgumentError(file_.string() + ": expected an object of projects' quotas");
  }
  std::map<std::string, ProjectQuota> loaded;
  for (const auto& [project, value] : j.items()) {
    auto q = ProjectQuotaFromJson(value);
    if (!q.ok()) return q.status().WithPrefix(file_.string() + ": project " + project);
    loaded[project] = *q;
  }
  std::lock_guard lock(mu_);
  quotas_ = std::move(loaded);
  return Status::Ok();
}

Status QuotaBook::Write(const std::map<std::string, ProjectQuota>& quotas) const {
  if (file_.empty()) return Status::Ok();
  json j = json::object();
  for (const auto& [project, q] : quotas) j[project] = ProjectQuotaToJson(q);
  return WriteFileAtomic(file_, j.dump(2) + "\n");
}

Status QuotaBook::Set(const std::string& project, std::optional<ProjectQuota> quota) {
  std::lock_guard lock(mu_);
  std::map<std::string, ProjectQuota> next = quotas_;
  if (quota) {
    next[project] = *quota;
  } else {
    next.erase(project);
  }
  TY_RETURN_IF_ERROR(Write(next));
  quotas_ = std::move(next);
  return Status::Ok();
}

std::optional<ProjectQuota> QuotaBook::Get(const std::string& project) const {
  std::lock_guard lock(mu_);
  auto it = quotas_.find(project);
  if (it == quotas_.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, ProjectQuota> QuotaBook::All() const {
  std::lock_guard lock(mu_);
  return quotas_;
}

}  // namespace trainyard::controller
