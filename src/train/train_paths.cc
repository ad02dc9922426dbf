#include "train/train_paths.h"

#include <algorithm>
#include <sstream>

#include "common/bucket_path.h"
#include "data/label_map.h"
#include "train/output_check.h"

namespace trainyard::train {
namespace fs = std::filesystem;
namespace {

StatusOr<fs::path> Resolve(const std::string& flag, const std::string& value) {
  auto path = ResolveStoragePath(value);
  if (!path.ok()) return path.status().WithPrefix(flag);
  return *path;
}

// An output's path; a gs:// one only in a bucket that exists (a typo must not make a new bucket).
StatusOr<fs::path> ResolveOutput(const std::string& flag, const std::string& value) {
  TY_RETURN_IF_ERROR(CheckBucketExists(value).WithPrefix(flag));
  return Resolve(flag, value);
}

Status CheckJobDir(const TrainPaths& p) {
  const std::string tensorboard_entry = TensorBoardEntryInJobDir(p);
  std::error_code ec;
  if (fs::exists(p.job_dir, ec) && !fs::is_directory(p.job_dir, ec)) {
    return InvalidArgumentError("--job-dir " + p.job_dir.string() +
                                " is a file; pass a directory to export the model to");
  }
  if (fs::is_directory(p.job_dir, ec)) {
    for (const auto& entry : fs::directory_iterator(p.job_dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name != tensorboard_entry &&
          std::find(ExportFiles().begin(), ExportFiles().end(), name) == ExportFiles().end()) {
        return InvalidArgumentError(
            "--job-dir " + p.job_dir.string() + " contains '" + name +
            "', which the export would delete (it replaces the whole directory); use an empty "
            "or new directory, or one holding only a previous export");
      }
    }
  }
  if (!p.checkpoint_dir.empty()) {
    const fs::path job = fs::weakly_canonical(p.job_dir);
    const fs::path ckpt = fs::weakly_canonical(p.checkpoint_dir);
    auto [a, b] = std::mismatch(job.begin(), job.end(), ckpt.begin(), ckpt.end());
    if (a == job.end()) {
      return InvalidArgumentError("--checkpoint-dir " + p.checkpoint_dir.string() +
                                  " is inside --job-dir " + p.job_dir.string() +
                                  ", which the export replaces; put checkpoints elsewhere");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string TensorBoardEntryInJobDir(const TrainPaths& p) {
  if (p.job_dir.empty() || p.tensorboard_dir.empty()) return "";
  const fs::path job = fs::weakly_canonical(p.job_dir);
  const fs::path tensorboard = fs::weakly_canonical(p.tensorboard_dir);
  auto [a, b] = std::mismatch(job.begin(), job.end(), tensorboard.begin(), tensorboard.end());
  if (a != job.end() || b == tensorboard.end() || b->empty()) return "";
  return b->string();
}

const std::vector<std::string>& ExportFiles() {
  static const std::vector<std::string> files = {"model.safetensors", "config.json", "vocab.txt",
                                                 data::kLabelsFileName, "metrics.json"};
  return files;
}

StatusOr<TrainPaths> ResolveTrainPaths(const TrainOptions& o, bool check_job_dir,
                                       TrainConsole& console) {
  TrainPaths p;
  TY_ASSIGN_OR_RETURN(p.train, Resolve("--training-file", o.training_file));
  TY_ASSIGN_OR_RETURN(p.valid, Resolve("--validation-file", o.validation_file));
  if (!o.testing_file.empty()) {
    TY_ASSIGN_OR_RETURN(p.test, Resolve("--testing-file", o.testing_file));
  }
  if (!o.model_dir.empty()) {
    TY_ASSIGN_OR_RETURN(p.model_dir, Resolve("--model-dir", o.model_dir));
  }
  if (!o.job_dir.empty()) {
    TY_ASSIGN_OR_RETURN(p.job_dir, o.dry_run ? Resolve("--job-dir", o.job_dir)
                                             : ResolveOutput("--job-dir", o.job_dir));
    const std::string ext = p.job_dir.extension().string();
    if (ext == ".pt" || ext == ".pth" || ext == ".bin") {
      // The article's job.sh passes --job-dir=gs://BUCKET/model/model.pt (a file).
      console.Warning("--job-dir " + o.job_dir + " names a file; exporting to its directory " +
                      p.job_dir.parent_path().string() + " (model.safetensors, config.json, ...)");
      p.job_dir = p.job_dir.parent_path();
    }
  }
  if (!o.checkpoint_dir.empty() && !o.dry_run) {
    TY_ASSIGN_OR_RETURN(p.checkpoint_dir, ResolveOutput("--checkpoint-dir", o.checkpoint_dir));
    if (const std::string run = CheckpointRunName(o); !run.empty()) p.checkpoint_dir /= run;
  }
  if (!o.resume_from.empty() && !o.dry_run) {
    TY_ASSIGN_OR_RETURN(p.resume_from, Resolve("--resume-from", o.resume_from));
  }
  if (!o.tensorboard_dir.empty() && !o.dry_run) {
    TY_ASSIGN_OR_RETURN(p.tensorboard_dir, ResolveOutput("--tensorboard-dir", o.tensorboard_dir));
  }
  if (!o.vocab.empty()) {
    TY_ASSIGN_OR_RETURN(p.vocab, Resolve("--vocab", o.vocab));
  } else if (!p.model_dir.empty() && fs::exists(p.model_dir / "vocab.txt")) {
    p.vocab = p.model_dir / "vocab.txt";
  } else {
    return InvalidArgumentError(
        "--vocab is required: pass the WordPiece vocab.txt the model uses (e.g. "
        "data/sample/vocab.txt, BERT's uncased 30522-token vocabulary)" +
        std::string(p.model_dir.empty() ? ""
                                        : ", or a --model-dir that contains vocab.txt (" +
                                              p.model_dir.string() + " has none)"));
  }
  if (!p.job_dir.empty() && !o.dry_run && check_job_dir) TY_RETURN_IF_ERROR(CheckJobDir(p));
  return p;
}

Status CheckTrainOutputs(const TrainOptions& o, const replica_contract::EnvMap& env) {
  StatusOr<replica_contract::ReplicaRole> role = replica_contract::DecodeRole(env);
  if (!role.ok() || !role->is_chief()) return Status::Ok();
  std::ostringstream quiet;  // ResolveTrainPaths' warnings: RunTraining prints them
  TrainConsole console(quiet, quiet, false);
  StatusOr<TrainPaths> paths = ResolveTrainPaths(o, /*check_job_dir=*/false, console);
  if (!paths.ok()) return Status::Ok();
  if (!paths->job_dir.empty() && !o.dry_run) {
    TY_RETURN_IF_ERROR(CheckExportDir("--job-dir", paths->job_dir));
  }
  if (!paths->checkpoint_dir.empty()) {
    TY_RETURN_IF_ERROR(CheckOutputDir("--checkpoint-dir", paths->checkpoint_dir));
  }
  if (!paths->tensorboard_dir.empty()) {
    TY_RETURN_IF_ERROR(CheckOutputDir("--tensorboard-dir", paths->tensorboard_dir));
  }
  return Status::Ok();
}

}  // namespace trainyard::train
