// Scalars of a TensorBoard log directory (a job's AIP_TENSORBOARD_LOG_DIR), read incrementally.
//
// Every file whose name contains "tfevents" in the directory or its subdirectories (up to
// ScalarsReadOptions::max_depth levels) is read; a subdirectory is a TensorBoard "run" (TF's
// Keras callback writes logs/train and logs/validation), the directory itself is run ".". Files
// are append-only while a job runs, so a cursor remembers how far each file was read: a call with
// the cursor of the previous call returns only the points written since. Incomplete last records
// (a writer mid-append, or a job killed mid-record) are left for a later call; records with a bad
// payload CRC are skipped and reported in `warnings`; a file whose framing is lost (length CRC
// mismatch) is read up to that point and reported.
//
// Replicas write the directory as other users: names beneath it are resolved without following
// links (common/beneath.h), and only regular files are read (a FIFO cannot block the reader).
//
// Stateless and thread-safe: everything a call needs is in its arguments.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/beneath.h"
#include "common/status.h"

namespace trainyard::tensorboard {

struct ScalarPoint {
  int64_t step = 0;
  double wall_time = 0;
  double value = 0;
};

struct ScalarSeries {
  std::string run;  // "." or the subdirectory relative to the log dir
  std::string tag;
  std::vector<ScalarPoint> points;  // in file order (for one file: write order)
};

struct ScalarsPage {
  std::vector<ScalarSeries> series;  // sorted by run, then tag; only those with new points
  std::string next_cursor;           // pass back as `cursor` to read what is written next
  bool more = false;                 // max_bytes was reached: call again at once for the rest
  std::vector<std::string> warnings;
};

struct ScalarsReadOptions {
  uint64_t max_bytes = 32 << 20;  // bytes of event files read per call (more = true beyond)
  int max_depth = 3;
  size_t max_files = 1000;
  uint64_t max_record_bytes = 64 << 20;  // a longer record is treated as lost framing
};

// Reads what was appended to the event files under `log_dir` since `cursor` ("" = from the
// start). A missing `log_dir` gives an empty page (the job may not have written anything yet).
// INVALID_ARGUMENT when `cursor` is not one this function returned; UNAVAILABLE when the
// directory cannot be listed.
StatusOr<ScalarsPage> ReadScalars(const std::filesystem::path& log_dir, std::string_view cursor,
                                  const ScalarsReadOptions& options = {});
// The same for `log_dir` given as `rel` beneath `root` (a gs:// directory beneath the bucket
// root): a link on the way reads as a missing directory.
StatusOr<ScalarsPage> ReadScalars(const BeneathDir& root, const std::string& rel,
                                  std::string_view cursor, const ScalarsReadOptions& options = {});

}  // namespace trainyard::tensorboard
