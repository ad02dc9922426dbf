#include "train/checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "common/file_util.h"
#include "common/json_parse.h"

namespace trainyard::train {
namespace fs = std::filesystem;

namespace {

constexpr char kPrefix[] = "checkpoint-";
constexpr char kStateFile[] = "state.pt";
constexpr char kJsonFile[] = "trainer_state.json";
constexpr char kDoneFile[] = "DONE";

Status WritePlain(const fs::path& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
  out.close();
  if (!out) return IoError("cannot write " + path.string());
  return Status::Ok();
}

}  // namespace

CheckpointManager::CheckpointManager(fs::path dir, int keep)
    : dir_(std::move(dir)), keep_(std::max(1, keep)) {}

std::vector<fs::path> CheckpointManager::CompleteCheckpoints() const {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    // Staging directories are "<final>.tmp.<pid>.<n>"; the name check skips them.
    if (name.rfind(kPrefix, 0) != 0 || name.find('.') != std::string::npos) continue;
    if (!fs::exists(entry.path() / kDoneFile, ec)) continue;
    out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());  // fixed-width step numbers sort chronologically
  return out;
}

Status CheckpointManager::Save(const TrainingState& state) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s%08lld", kPrefix, static_cast<long long>(state.global_step));
  const fs::path final_dir = dir_ / name;
  TY_RETURN_IF_ERROR(MakeDirs(dir_));
  TY_ASSIGN_OR_RETURN(fs::path staging, MakeStagingDir(final_dir));
  auto fail = [&](Status s) {
    std::error_code ec;
    fs::remove_all(staging, ec);
    return s.WithPrefix("writing checkpoint " + final_dir.string());
  };
  try {
    c10::Dict<std::string, at::Tensor> dict;
    for (const auto& [key, tensor] : state.tensors)
      dict.insert(key, tensor.detach().to(torch::kCPU));
    std::vector<char> bytes = torch::pickle_save(dict);
    Status s = WritePlain(staging / kStateFile, bytes.data(), bytes.size());
    if (!s.ok()) return fail(s);
  } catch (const std::exception& e) {
    return fail(InternalError(std::string("serializing tensors: ") + e.what()));
  }
  nlohmann::json j = {{"format", "trainyard-bert-checkpoint"},
                      {"version", kFormatVersion},
                      {"epoch", state.epoch},
                      {"next_batch", state.next_batch},
                      {"global_step", state.global_step},
                      {"plan", state.plan},
                      {"fingerprint", state.fingerprint},
                      {"progress", state.progress},
                      {"writer", state.writer}};
  const std::string text = j.dump();
  Status s = WritePlain(staging / kJsonFile, text.data(), text.size());
  if (!s.ok()) return fail(s);
  // DONE last: CommitDirectory fsyncs every file before the rename, so DONE implies the rest.
  s = WritePlain(staging / kDoneFile, "", 0);
  if (!s.ok()) return fail(s);
  s = CommitDirectory(staging, final_dir);
  if (!s.ok()) return fail(s);

  std::vector<fs::path> complete = CompleteCheckpoints();
  for (size_t i = 0; i + keep_ < complete.size(); ++i) {
    std::error_code ec;
    fs::remove_all(complete[i], ec);
  }
  return Status::Ok();
}

StatusOr<std::optional<TrainingState>> CheckpointManager::LoadLatest(fs::path* from) const {
  std::vector<fs::path> complete = CompleteCheckpoints();
  if (complete.empty()) return std::optional<TrainingState>();
  if (from) *from = complete.back();
  TY_ASSIGN_OR_RETURN(TrainingState state, Load(complete.back()));
  return std::optional<TrainingState>(std::move(state));
}

StatusOr<fs::path> CheckpointManager::FindCheckpoint(const fs::path& path,
                                                     const std::string& flag) {
  std::error_code ec;
  if (fs::exists(path / kDoneFile, ec)) return path;
  std::vector<fs::path> complete = CheckpointManager(path).CompleteCheckpoints();
  if (!complete.empty()) return complete.back();
  return NotFoundError(
      flag + " " + path.string() +
      (fs::is_directory(path, ec) ? " holds no complete checkpoint" : " does not exist") +
      ": pass a checkpoint-NNNNNNNN directory (with its DONE file) or the "
      "--checkpoint-dir of the run to continue");
}

StatusOr<TrainingState> CheckpointManager::Load(const fs::path& dir) {
  auto corrupt = [&](const std::string& why) {
    return DataLossError(
        "checkpoint " + dir.string() + " is unreadable (" + why +
        "); delete it to resume from the one before, or use a new --checkpoint-dir");
  };
  std::error_code ec;
  if (!fs::exists(dir / kDoneFile, ec)) {
    return NotFoundError("checkpoint " + dir.string() +
                         " is not complete (no DONE file): it was being written when its run "
                         "stopped; use the one before it");
  }
  auto json_text = ReadFile(dir / kJsonFile);
  if (!json_text.ok()) return corrupt(json_text.status().message());
  StatusOr<nlohmann::json> parsed = ParseJson(*json_text);
  if (!parsed.ok() || !parsed->is_object()) {
    return corrupt(std::string(kJsonFile) + " is not a JSON object");
  }
  nlohmann::json j = std::move(*parsed);
  if (j.value("format", "") != "trainyard-bert-checkpoint") {
    return corrupt(std::string(kJsonFile) + " is not a trainyard-bert checkpoint");
  }
  if (j.value("version", 0) != kFormatVersion) {
    return corrupt("format version " + std::to_string(j.value("version", 0)) +
                   ", this build reads " + std::to_string(kFormatVersion));
  }
  TrainingState state;
  try {
    state.epoch = j.at("epoch").get<int64_t>();
    state.next_batch = j.at("next_batch").get<int64_t>();
    state.global_step = j.at("global_step").get<int64_t>();
    state.plan = j.at("plan").get<BatchPlan>();
    state.fingerprint = j.at("fingerprint");
    state.progress = j.at("progress");
    if (auto it = j.find("writer"); it != j.end() && it->is_object()) state.writer = *it;
  } catch (const std::exception& e) {
    return corrupt(std::string(kJsonFile) + ": " + e.what());
  }
  auto bytes = ReadFile(dir / kStateFile);
  if (!bytes.ok()) return corrupt(bytes.status().message());
  try {
    std::vector<char> data(bytes->begin(), bytes->end());
    c10::IValue value = torch::pickle_load(data);
    for (const auto& item : value.toGenericDict()) {
      state.tensors[item.key().toStringRef()] = item.value().toTensor();
    }
  } catch (const std::exception& e) {
    return corrupt(std::string(kStateFile) + ": " + e.what());
  }
  return state;
}

}  // namespace trainyard::train
