// The trainer's outputs, checked in its first second, before it reads any data: a run that trains
// for an hour and then cannot save its model has lost the hour. Each check does, as this process,
// what writing the output will need, and undoes it:
//
//   CheckExportDir (--job-dir):  creates and removes the export's staging directory
//                                "<dir>.tmp.<pid>.<n>" beside the dir, in its parent
//                                (common/file_util.h MakeStagingDir; missing parents are made, as
//                                the export makes them); a previous export there must be movable
//                                aside (CommitDirectory): not held by a sticky parent (/tmp) for
//                                another user;
//   CheckOutputDir (--checkpoint-dir, --tensorboard-dir):  makes the dir if missing, then creates
//                                and removes a staging directory inside it (what a checkpoint
//                                commit and an event file need).
//
// A failure is FAILED_PRECONDITION: "<flag> <dir>: cannot create <path>: <errno text>; <the
// directory that refused> is owned by <user>:<group> (uid, gid), mode <octal>, and this process
// runs as <user> (uid, gid, groups). Fix: ..." with the fix (chown / chgrp + chmod g+ws, or another
// flag value). trainyard-bert train then exits replica_contract::kExitConfig (78), which
// executors do not restart. No LibTorch.
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"

namespace trainyard::train {

// `flag` names the output in messages ("--job-dir").
Status CheckExportDir(const std::string& flag, const std::filesystem::path& dir);
Status CheckOutputDir(const std::string& flag, const std::filesystem::path& dir);

}  // namespace trainyard::train
