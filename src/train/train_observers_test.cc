#include "train/train_observers.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "testing/test_util.h"
#include "train/progress.h"

namespace trainyard::train {
namespace {

// Bytes in the event file after one logged step (global_step 10), before any epoch ends.
uintmax_t EventBytesAfterOneStep(std::chrono::milliseconds flush_interval) {
  auto writer = TensorBoardWriter::Create(testing::MakeTestDir() / "tb");
  EXPECT_TRUE(writer.ok()) << writer.status();
  const std::filesystem::path path = writer->path();
  std::ostringstream out, log;
  TrainConsole console(out, log, /*progress_bar=*/false);
  TensorBoardObserver observer(std::move(writer).value(), console, flush_interval);
  StepEvent step{.epoch = 1,
                 .batch = 9,
                 .batches = 100,
                 .steps = 100,
                 .global_step = 10,
                 .loss = 0.5,
                 .learning_rate = 1e-5};
  EXPECT_TRUE(observer.OnStep(step).ok());
  return std::filesystem::file_size(path);
}

// The console's curves read the event file while the job runs: step scalars must reach it
// within the flush interval, not only at the epoch's end.
TEST(TensorBoardObserverTest, StepScalarsReachTheFileOnceTheFlushIntervalHasPassed) {
  const uintmax_t held = EventBytesAfterOneStep(std::chrono::hours(1));
  const uintmax_t flushed = EventBytesAfterOneStep(std::chrono::milliseconds(0));
  EXPECT_GT(flushed, held) << "held " << held << " bytes, flushed " << flushed;
}

}  // namespace
}  // namespace trainyard::train
