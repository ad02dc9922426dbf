#include "server/retention.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "common/beneath.h"
#include "controller/job_files.h"
#include "executor/gang_record.h"
#include "executor/job_dir_layout.h"

namespace trainyard::server {
namespace {

using std::chrono::seconds;

// A job dir no row accounts for is left alone this long: a job being created now has its row
// before its dir, but a pass lists the rows first and the dirs after.
constexpr seconds kOrphanGrace = std::chrono::hours(1);

bool Expired(seconds ttl, TimePoint since, TimePoint now) {
  return ttl.count() > 0 && since + ttl <= now;
}

TimePoint EndOf(const spec::CustomJob& job) {
  return job.end_time.value_or(job.update_time.value_or(job.create_time.value_or(TimePoint())));
}

std::string Human(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace

StatusOr<seconds> ParseTtl(const std::string& flag, const std::string& text) {
  const auto bad = [&] {
    return InvalidArgumentError(flag + ": '" + text +
                                "' is not a duration; use 0 (keep forever) or a number with s, m, "
                                "h or d, e.g. 30d or 12h");
  };
  if (text == "0") return seconds(0);
  if (text.size() < 2 || text.size() > 12) return bad();
  const std::string digits = text.substr(0, text.size() - 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(c); })) {
    return bad();
  }
  const int64_t n = std::stoll(digits);
  switch (text.back()) {
    case 's':
      return seconds(n);
    case 'm':
      return seconds(n * 60);
    case 'h':
      return seconds(n * 3600);
    case 'd':
      return seconds(n * 86400);
    default:
      return bad();
  }
}

nlohmann::json GcReport::ToJson() const {
  return {{"dryRun", dry_run},
          {"workDirsRemoved", work_dirs},
          {"logsRemoved", logs},
          {"deletedJobDirsRemoved", deleted_jobs},
          {"orphanDirsRemoved", orphans},
          {"bytesFreed", std::to_string(bytes)},
          {"operationsRemoved", operations},
          {"auditEntriesRemoved", audit_rows}};
}

std::string GcReport::Summary() const {
  return std::string(dry_run ? "would remove: " : "removed: ") + std::to_string(work_dirs) +
         " job work dirs, " + std::to_string(logs) + " job logs, " + std::to_string(deleted_jobs) +
         " deleted jobs' dirs, " + std::to_string(orphans) + " orphaned dirs (" + Human(bytes) +
         "), " + std::to_string(operations) + " operations, " + std::to_string(audit_rows) +
         " audit entries";
}

GcReport GcReport::FromJson(const nlohmann::json& j) {
  const auto num = [&j](const char* key) -> int64_t {
    const auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  };
  GcReport r;
  r.dry_run = j.value("dryRun", false);
  r.work_dirs = num("workDirsRemoved");
  r.logs = num("logsRemoved");
  r.deleted_jobs = num("deletedJobDirsRemoved");
  r.orphans = num("orphanDirsRemoved");
  const auto bytes = j.find("bytesFreed");
  if (bytes != j.end() && bytes->is_string())
    r.bytes = std::strtoull(bytes->get<std::string>().c_str(), nullptr, 10);
  r.operations = num("operationsRemoved");
  r.audit_rows = num("auditEntriesRemoved");
  return r;
}

bool GcReport::Empty() const {
  return work_dirs == 0 && logs == 0 && deleted_jobs == 0 && orphans == 0 && operations == 0 &&
         audit_rows == 0;
}

Retention::Retention(RetentionPolicy policy, RetentionParts parts)
    : policy_(policy), parts_(std::move(parts)) {
  parts_.clock = OrSystemClock(parts_.clock);
}

Retention::~Retention() { Stop(); }

StatusOr<GcReport> Retention::Collect(bool dry_run) {
  std::lock_guard pass(pass_mu_);
  const TimePoint now = parts_.clock();
  GcReport report;
  report.dry_run = dry_run;
  std::vector<std::string> known;
  TY_RETURN_IF_ERROR(CollectJobs(now, dry_run, &report, &known));
  TY_RETURN_IF_ERROR(CollectDirs(now, dry_run, known, &report));
  if (parts_.operations != nullptr && policy_.operation_ttl.count() > 0) {
    TY_ASSIGN_OR_RETURN(report.operations,
                        parts_.operations->ExpireDone(now - policy_.operation_ttl, dry_run));
  }
  if (parts_.audit != nullptr && policy_.audit_ttl.count() > 0) {
    TY_ASSIGN_OR_RETURN(report.audit_rows, parts_.audit->Expire(now - policy_.audit_ttl, dry_run));
  }
  return report;
}

// Every job row, page by page: the ended ones lose what their TTLs say; every id is remembered
// so the dir pass knows which dirs have a job.
Status Retention::CollectJobs(TimePoint now, bool dry_run, GcReport* report,
                              std::vector<std::string>* known) {
  TY_ASSIGN_OR_RETURN(BeneathDir jobs_dir, BeneathDir::Open(parts_.jobs_dir));
  TY_ASSIGN_OR_RETURN(std::vector<store::ParentCount> parents, parts_.jobs->CountJobsByParent());
  for (const store::ParentCount& parent : parents) {
    store::ListQuery q{parent.parent, "", store::kMaxPageSize, ""};
    do {
      TY_ASSIGN_OR_RETURN(store::ListResult page, parts_.jobs->List(q));
      for (const spec::CustomJob& job : page.jobs) {
        known->push_back(job.Id());
        if (!spec::IsTerminal(job.state) || !jobs_dir.Stat(job.Id()).ok()) continue;
        if (Expired(policy_.work_dir_ttl, EndOf(job), now)) {
          TY_ASSIGN_OR_RETURN(controller::Removed r,
                              controller::RemoveJobWorkFiles(jobs_dir, job.Id(), dry_run));
          report->work_dirs += r.entries > 0 ? 1 : 0;
          report->bytes += r.bytes;
        }
        const std::string logs = job.Id() + "/" + executor::kJobLogDirName;
        if (Expired(policy_.log_ttl, EndOf(job), now) && jobs_dir.Stat(logs).ok()) {
          report->bytes += controller::TreeBytes(jobs_dir, logs);
          ++report->logs;
          if (!dry_run) TY_RETURN_IF_ERROR(jobs_dir.RemoveAll(logs));
        }
      }
      q.page_token = page.next_page_token;
    } while (!q.page_token.empty());
  }
  std::sort(known->begin(), known->end());
  return Status::Ok();
}

// The dirs no row accounts for: deleted jobs (by their tombstone) and orphans.
Status Retention::CollectDirs(TimePoint now, bool dry_run, const std::vector<std::string>& known,
                              GcReport* report) {
  TY_ASSIGN_OR_RETURN(BeneathDir jobs_dir, BeneathDir::Open(parts_.jobs_dir));
  TY_ASSIGN_OR_RETURN(std::vector<BeneathDir::Entry> entries, jobs_dir.List());
  for (const BeneathDir::Entry& e : entries) {
    if (std::binary_search(known.begin(), known.end(), e.name)) continue;
    auto tombstone = controller::ReadTombstone(jobs_dir, e.name);
    bool remove = false;
    if (tombstone.ok() && tombstone->has_value()) {
      remove = Expired(policy_.log_ttl, (*tombstone)->end_time, now);
      if (remove) ++report->deleted_jobs;
    } else {
      auto st = jobs_dir.Stat(e.name);
      if (!st.ok()) continue;
      const TimePoint changed =
          FromUnixMicros(int64_t{st->st_mtim.tv_sec} * 1000000 + st->st_mtim.tv_nsec / 1000);
      remove = changed + kOrphanGrace <= now;
      if (remove) ++report->orphans;
    }
    if (!remove) continue;
    report->bytes += controller::TreeBytes(jobs_dir, e.name);
    if (dry_run) continue;
    TY_RETURN_IF_ERROR(jobs_dir.RemoveAll(e.name));
    for (const std::string& registry : parts_.registries) {
      TY_RETURN_IF_ERROR(executor::ForgetJobDir(parts_.data_dir, registry, e.name));
    }
  }
  return Status::Ok();
}

void Retention::Start(std::function<void(const StatusOr<GcReport>&)> on_pass) {
  if (policy_.interval.count() <= 0 || thread_.joinable()) return;
  thread_ = std::thread([this, on_pass = std::move(on_pass)] {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, policy_.interval, [this] { return stop_; })) {
      lock.unlock();
      on_pass(Collect(/*dry_run=*/false));
      lock.lock();
    }
  });
}

void Retention::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace trainyard::server
