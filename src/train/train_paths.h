// The files and directories of one training run, resolved from TrainOptions (gs:// URIs map to
// local paths through TRAINYARD_BUCKET_ROOT: common/bucket_path.h) and checked before any work.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/status.h"
#include "replica_contract/replica_contract.h"
#include "train/progress.h"
#include "train/train_options.h"

namespace trainyard::train {

struct TrainPaths {
  std::filesystem::path train, valid, test;  // test empty without --testing-file
  std::filesystem::path model_dir;           // empty: BERT-Tiny from scratch
  std::filesystem::path vocab;
  std::filesystem::path job_dir;  // export directory; empty = no export
  // <--checkpoint-dir>/<CheckpointRunName> (train_options.h); empty on dry runs or without one.
  std::filesystem::path checkpoint_dir;
  std::filesystem::path resume_from;  // --resume-from; empty on dry runs or without it
  std::filesystem::path tensorboard_dir;
};

// The files an export writes; a job dir holding anything else is refused (the export replaces
// the whole directory), except the entry that holds the TensorBoard dir (below).
const std::vector<std::string>& ExportFiles();

// The job dir's entry that holds the TensorBoard dir ("logs" for --job-dir=.../model and
// --tensorboard-dir=.../model/logs, the article's flags), or "" when the TensorBoard dir is not
// inside the job dir. The export carries that entry over into the directory it commits.
std::string TensorBoardEntryInJobDir(const TrainPaths& p);

// INVALID_ARGUMENT naming the flag and the fix: an unresolvable URI, no vocab, and for the chief
// (`check_job_dir`, the only writer of the export) a job dir that is a file, holds files the
// export would delete, or contains the checkpoint dir. A --job-dir naming a .pt/.pth/.bin file
// (the article's job.sh) exports to its directory, with a warning on `console`. NOT_FOUND naming
// the flag and the URI for an output (--job-dir, --checkpoint-dir, --tensorboard-dir) in a bucket
// that does not exist (CheckBucketExists; the trainer then exits 66).
StatusOr<TrainPaths> ResolveTrainPaths(const TrainOptions& o, bool check_job_dir,
                                       TrainConsole& console);

// The outputs this process will write, checked before anything else (output_check.h): the export
// dir (not on dry runs), the checkpoint dir and the TensorBoard dir, resolved as ResolveTrainPaths
// resolves them, for the chief only (rank 0 by replica_contract::DecodeRole(env); the other ranks
// write none). OK when there is nothing to check; flags ResolveTrainPaths or DecodeRole refuse
// are left to RunTraining to report. FAILED_PRECONDITION from the checks otherwise.
Status CheckTrainOutputs(const TrainOptions& o, const replica_contract::EnvMap& env);

}  // namespace trainyard::train
