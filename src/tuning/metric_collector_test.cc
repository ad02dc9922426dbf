#include "tuning/metric_collector.h"

#include <gtest/gtest.h>

#include <deque>

#include "testing/test_util.h"
#include "tuning/study_spec_json.h"

namespace trainyard::tuning {
namespace {

// What cloudml-hypertune writes for report(tag, value, step) at time t (keys sorted).
std::string Line(const std::string& tag, const std::string& value, int step, double t) {
  char buf[256];
  std::snprintf(
      buf, sizeof(buf),
      "{\"%s\": \"%s\", \"global_step\": \"%d\", \"timestamp\": %.2f, \"trial\": \"1\"}\n",
      tag.c_str(), value.c_str(), step, t);
  return buf;
}

std::string Render(const std::vector<Measurement>& ms) {
  std::string out;
  for (const Measurement& m : ms) {
    out += std::to_string(m.step_count) + ":";
    for (const MetricValue& v : m.metrics)
      out += v.metric_id + "=" + FormatParameterValue(v.value) + ",";
    if (m.elapsed_seconds) out += "t=" + FormatParameterValue(*m.elapsed_seconds);
    out += " ";
  }
  return out;
}

TEST(HypertuneParseTest, SkipsBadAndPartialLines) {
  std::string content = Line("acc", "0.5", 10, 1000.25) + "not json\n" +
                        Line("acc", "0.6", 20, 1001) + "{\"acc\": \"0.7\", \"global_st";
  HypertuneParseResult r = ParseHypertuneFile(content);
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[1].global_step, 20);
  EXPECT_DOUBLE_EQ(r.records[0].metrics[0].value, 0.5);
  EXPECT_DOUBLE_EQ(*r.records[0].timestamp, 1000.25);
  EXPECT_EQ(r.bad_lines, 1);
  EXPECT_TRUE(r.partial_last_line);
}

// Simulates the library: a deque of the last 100 reports, the whole file rewritten each time,
// and the collector polling at awkward moments (mid-rewrite, after rotation).
// The real cloudml-hypertune (PyPI, in the project's venv) writes; the parser reads every report:
// a named tag, the default tag, steps, a checkpoint path (a key the parser must ignore).
TEST(HypertuneParseTest, ReadsWhatCloudmlHypertuneWrites) {
  const auto dir = testing::MakeTestDir();
  const std::string file = (dir / "hypertune" / "output.metrics").string();
  const std::string script = R"(
import hypertune
ht = hypertune.HyperTune()
ht.report_hyperparameter_tuning_metric("accuracy", 0.25, global_step=3)
ht.report_hyperparameter_tuning_metric("accuracy", "0.5", 7, checkpoint_path="gs://b/ckpt")
ht.report_hyperparameter_tuning_metric(None, 1.5)
print(hypertune.__file__)
)";
  testing::ProcessResult r = testing::RunVenvPython(
      {"-c", script}, "", {"CLOUD_ML_HP_METRIC_FILE=" + file, "CLOUD_ML_TRIAL_ID=4"});
  if (r.exit_code == testing::kVenvMissing) GTEST_SKIP() << r.out;
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_NE(r.out.find("site-packages/hypertune"), std::string::npos) << r.out;
  HypertuneParseResult parsed = ParseHypertuneFile(testing::ReadFileOrDie(file));
  ASSERT_EQ(parsed.records.size(), 3u) << testing::ReadFileOrDie(file);
  EXPECT_EQ(parsed.records[0].trial, "4");
  EXPECT_EQ(parsed.records[0].global_step, 3);
  ASSERT_EQ(parsed.records[0].metrics.size(), 1u);
  EXPECT_EQ(parsed.records[0].metrics[0].metric_id, "accuracy");
  EXPECT_DOUBLE_EQ(parsed.records[0].metrics[0].value, 0.25);
  EXPECT_EQ(parsed.records[1].global_step, 7);
  ASSERT_EQ(parsed.records[1].metrics.size(), 1u);
  EXPECT_DOUBLE_EQ(parsed.records[1].metrics[0].value, 0.5);
  ASSERT_EQ(parsed.records[2].metrics.size(), 1u);
  EXPECT_EQ(parsed.records[2].metrics[0].metric_id, "training/hptuning/metric");
  EXPECT_EQ(parsed.records[2].global_step, 0);
}

TEST(MetricCollectorTest, AccumulatesAcrossRewritesTruncationAndRotation) {
  MetricCollector c({"acc"}, 1000.0);
  std::deque<std::string> window;
  auto file = [&] {
    std::string s;
    for (const std::string& l : window) s += l;
    return s;
  };
  for (int step = 1; step <= 150; ++step) {
    window.push_back(Line("acc", std::to_string(step / 1000.0), step, 1000.0 + step));
    if (window.size() > 100) window.pop_front();
    const std::string content = file();
    if (step % 7 == 0) {
      // Poll mid-rewrite: only a prefix is on disk, cut inside a line.
      c.ObserveHypertuneFile(std::string_view(content).substr(0, content.size() / 2 + 3));
    }
    if (step % 3 == 0) c.ObserveHypertuneFile(content);
    if (step % 11 == 0) c.ObserveHypertuneFile("");  // truncated to empty
  }
  c.ObserveHypertuneFile(file());
  const std::vector<Measurement>& ms = c.measurements();
  ASSERT_EQ(ms.size(), 150u);  // nothing lost although the file only ever held 100
  for (size_t i = 0; i < ms.size(); ++i) {
    ASSERT_EQ(ms[i].step_count, static_cast<int64_t>(i + 1));
    ASSERT_DOUBLE_EQ(*ms[i].Metric("acc"), (i + 1) / 1000.0);
    ASSERT_DOUBLE_EQ(*ms[i].elapsed_seconds, static_cast<double>(i + 1));
  }
}

TEST(MetricCollectorTest, MergesMetricsOfOneStepAndRestoresState) {
  MetricCollector c({"acc"}, std::nullopt);
  std::string content =
      Line("acc", "0.5", 10, 1) + Line("loss", "2.5", 10, 2) + Line("acc", "0.6", 20, 3);
  EXPECT_EQ(c.ObserveHypertuneFile(content).size(), 2u);
  EXPECT_EQ(Render(c.measurements()), "10:acc=0.5,loss=2.5, 20:acc=0.6, ");
  MetricCollector restored({"acc"}, std::nullopt);
  ASSERT_TRUE(restored.RestoreState(nlohmann::json::parse(c.SaveState().dump())).ok());
  EXPECT_TRUE(restored.ObserveHypertuneFile(content).empty());  // no double counting
  content += Line("acc", "0.7", 30, 4);
  EXPECT_EQ(restored.ObserveHypertuneFile(content).size(), 1u);
  EXPECT_EQ(Render(restored.measurements()), "10:acc=0.5,loss=2.5, 20:acc=0.6, 30:acc=0.7, ");
}

TEST(MetricCollectorTest, FallsBackToStdoutUntilTheFileAppears) {
  MetricCollector c({"val/acc"}, std::nullopt);
  EXPECT_FALSE(c.ObserveStdoutLine("epoch 1 loss=0.3").has_value());
  EXPECT_FALSE(c.ObserveStdoutLine("my_val/acc=0.9").has_value());  // not the same id
  EXPECT_TRUE(c.ObserveStdoutLine("step=100 val/acc=0.61 lr=1e-3").has_value());
  EXPECT_TRUE(c.ObserveStdoutLine("val/acc = 6.5e-1").has_value());
  EXPECT_EQ(Render(c.measurements()), "100:val/acc=0.61, 2:val/acc=0.65, ");
  c.ObserveHypertuneFile(Line("val/acc", "0.7", 5, 1));
  EXPECT_EQ(Render(c.measurements()), "5:val/acc=0.7, ");
}

TEST(SelectFinalMeasurementTest, LastOrBestPerGoal) {
  std::vector<Measurement> ms(4);
  const double values[] = {0.3, 0.9, 0.1, 0.5};
  for (int i = 0; i < 4; ++i) {
    ms[i].step_count = i;
    ms[i].metrics = {{"m", values[i]}};
  }
  ms.push_back(Measurement{std::nullopt, 9, {{"other", 1.0}}});  // lacks the metric
  auto step = [&](MetricSpec m, MeasurementSelection s) {
    return SelectFinalMeasurement(ms, m, s)->step_count;
  };
  EXPECT_EQ(step({"m", Goal::kMaximize}, MeasurementSelection::kUnspecified), 3);
  EXPECT_EQ(step({"m", Goal::kMaximize}, MeasurementSelection::kLast), 3);
  EXPECT_EQ(step({"m", Goal::kMaximize}, MeasurementSelection::kBest), 1);
  EXPECT_EQ(step({"m", Goal::kMinimize}, MeasurementSelection::kBest), 2);
  EXPECT_FALSE(
      SelectFinalMeasurement(ms, {"absent", Goal::kMaximize}, MeasurementSelection::kLast));
}

}  // namespace
}  // namespace trainyard::tuning
