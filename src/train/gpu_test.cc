// The training step on a CUDA device against the same step on the CPU, as llm.c checks its CUDA
// trainer against its CPU reference:
//   - one TrainStep on the same weights and batch: logits, loss and every parameter's gradient
//     within float32 tolerance (the CPU path runs the trainer's own kernels: ParallelLinear, the
//     row-sparse embedding gradient; CUDA runs ATen's and the fused attention). The updated
//     parameters are not compared: AdamW's first step is lr * g / (|g| + eps), which turns float
//     noise in a gradient element near zero into a difference of up to 2 lr;
//   - bf16 autocast on CUDA: 100 steps from the same weights on the same batches, the loss curve
//     stays close to float32's (10-step means) and still learns.
// Without a CUDA LibTorch and GPU every test skips ("no CUDA device"; ctest says Skipped).
// TRAINYARD_GPU_TEST_DEVICE=cpu runs the comparisons with the CPU in the GPU's place: a dry run
// of this test on a machine without a GPU (scripts/gpu-check.sh --dry-run), where the "bf16"
// run is a second float32 run (CPU autocast is not what the trainer's --bf16 does).
// Dropout is 0 in these models: CUDA and the CPU draw different masks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "model/bert.h"
#include "text/bert_tokenizer.h"
#include "train/autocast.h"
#include "train/batch_plan.h"
#include "train/labeled_dataset.h"
#include "train/train_step.h"
#include "train/trainer_test_util.h"

namespace trainyard::train {
namespace {

namespace fs = std::filesystem;

// The device under test: CUDA, or the CPU when TRAINYARD_GPU_TEST_DEVICE=cpu; nullopt to skip.
std::optional<torch::Device> DeviceUnderTest() {
  const char* forced = std::getenv("TRAINYARD_GPU_TEST_DEVICE");
  if (forced && std::string(forced) == "cpu") return torch::Device(torch::kCPU);
  if (torch::cuda::is_available()) return torch::Device(torch::kCUDA);
  return std::nullopt;
}

// A BERT-Tiny-shaped classifier (real 30522-token vocabulary size, 2 layers, hidden 128) with
// dropout 0, from a fixed seed, on `device`.
model::BertForSequenceClassification MakeModel(torch::Device device) {
  model::BertConfig config = model::BertConfig::Tiny({"neg", "pos"});
  config.hidden_dropout_prob = 0;
  config.attention_probs_dropout_prob = 0;
  torch::manual_seed(7);
  model::BertForSequenceClassification m(config);
  m->to(device);
  m->train();
  return m;
}

struct Stepper {
  explicit Stepper(model::BertForSequenceClassification m) : model(std::move(m)) {
    std::vector<std::pair<std::string, torch::Tensor>> named;
    for (const auto& item : model->named_parameters()) named.emplace_back(item.key(), item.value());
    optimizer.emplace(named, AdamWOptions{});
    auto connected = DataParallel::Connect({}, {});
    EXPECT_TRUE(connected.ok()) << connected.status();
    dp = std::move(connected).value();
    EXPECT_TRUE(dp->Attach(model->named_parameters(), model->named_buffers()).ok());
  }
  model::BertForSequenceClassification model;
  std::optional<AdamW> optimizer;
  std::unique_ptr<DataParallel> dp;
};

// The synthetic two-class set of the trainer tests, tokenized, with its shuffled batch plan.
struct Data {
  TokenizedSet set;
  BatchPlan plan;
  int32_t pad_id = 0;
};

Data MakeData(const fs::path& dir, int rows, int batch_size) {
  auto splits = testing_util::WriteSyntheticSplits(dir, rows);
  auto tokenizer = text::BertTokenizer::FromFile(splits.vocab);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  auto texts = ReadLabeledCsv(splits.train, "bodyText", "Target");
  EXPECT_TRUE(texts.ok()) << texts.status();
  Data d;
  d.set = TokenizedSet::Encode(*tokenizer, texts->texts, texts->labels, 32, 1);
  BatchPlanOptions options;
  options.batch_size = batch_size;
  d.plan = PlanBatches(d.set.Lengths(), options, /*seed=*/1, /*epoch=*/1);
  d.pad_id = tokenizer->pad_id();
  return d;
}

double MaxAbs(const torch::Tensor& t) { return t.abs().max().item<double>(); }

// "name: max |a - b| = x (max |b| = y)" when |a - b| exceeds atol + rtol * max |b|, else "".
std::string Compare(const std::string& name, const torch::Tensor& got, const torch::Tensor& want,
                    double atol, double rtol, double* worst_relative) {
  const torch::Tensor a = got.to(torch::kCPU).to(torch::kDouble);
  const torch::Tensor b = want.to(torch::kCPU).to(torch::kDouble);
  const double diff = MaxAbs(a - b), scale = MaxAbs(b);
  *worst_relative = std::max(*worst_relative, diff / std::max(scale, 1e-12));
  if (diff <= atol + rtol * scale) return "";
  std::ostringstream out;
  out << name << ": max |device - cpu| = " << diff << " (max |cpu| = " << scale << ")\n";
  return out.str();
}

TEST(GpuTest, OneStepLogitsLossAndGradientsMatchTheCpu) {
  const auto device = DeviceUnderTest();
  if (!device) GTEST_SKIP() << "no CUDA device (set TRAINYARD_GPU_TEST_DEVICE=cpu for a dry run)";
  const fs::path dir = testing::MakeTestDir();
  Data data = MakeData(dir, 64, 32);
  Stepper cpu(MakeModel(torch::kCPU));
  Stepper gpu(MakeModel(*device));
  // Same weights whatever the device's initialisation did.
  {
    torch::NoGradGuard no_grad;
    auto from = cpu.model->named_parameters();
    for (auto& item : gpu.model->named_parameters()) item.value().copy_(from[item.key()]);
  }
  BatchBuilder cpu_builder(32, 32, data.pad_id, torch::kCPU);
  BatchBuilder gpu_builder(32, 32, data.pad_id, *device);
  const Batch cpu_batch = cpu_builder.Build(data.set, data.plan[0]);  // (B, T)
  const Batch gpu_batch = gpu_builder.Build(data.set, data.plan[0]);  // (B, T)

  auto a = TrainStep(cpu.model, *cpu.optimizer, *cpu.dp, cpu_batch, 1e-3, 0, false);
  auto b = TrainStep(gpu.model, *gpu.optimizer, *gpu.dp, gpu_batch, 1e-3, 0, false);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  double worst_logits = 0, worst_grad = 0;
  std::string failures = Compare("logits", b->logits, a->logits, 1e-5, 1e-4, &worst_logits);
  failures += Compare("loss", b->loss, a->loss, 1e-6, 1e-5, &worst_logits);
  auto cpu_params = cpu.model->named_parameters();
  int compared = 0;
  for (const auto& item : gpu.model->named_parameters()) {
    const torch::Tensor& want = cpu_params[item.key()];
    failures +=
        Compare("grad " + item.key(), item.value().grad(), want.grad(), 1e-6, 1e-3, &worst_grad);
    ++compared;
  }
  std::cout << "[gpu-parity] device " << device->str() << ", loss cpu " << a->loss.item<double>()
            << " device " << b->loss.item<double>()
            << "; worst max-abs-diff / max |cpu|: logits+loss " << worst_logits << ", gradients "
            << worst_grad << " (" << compared << " parameters)\n";
  EXPECT_EQ(failures, "");
  EXPECT_EQ(compared, static_cast<int>(cpu_params.size()));
}

TEST(GpuTest, Bf16LossCurveStaysCloseToFloat32Over100Steps) {
  const auto device = DeviceUnderTest();
  if (!device) GTEST_SKIP() << "no CUDA device (set TRAINYARD_GPU_TEST_DEVICE=cpu for a dry run)";
  // The dry run (CPU in the GPU's place) runs the same loop with float32 twice.
  const bool use_bf16 = device->is_cuda();
  if (use_bf16) {
    ASSERT_TRUE(CheckAutocastSupported(true, *device).ok());
  }
  const fs::path dir = testing::MakeTestDir();
  constexpr int kSteps = 100, kWindow = 10;
  Data data = MakeData(dir, 640, 32);  // 20 batches, 5 epochs' worth of steps
  std::vector<double> losses[2];
  for (bool bf16 : {false, true}) {
    Stepper s(MakeModel(*device));
    BatchBuilder builder(32, 32, data.pad_id, *device);
    for (int step = 0; step < kSteps; ++step) {
      const Batch batch = builder.Build(data.set, data.plan[step % data.plan.size()]);
      auto out = TrainStep(s.model, *s.optimizer, *s.dp, batch, 1e-3, step, bf16 && use_bf16);
      ASSERT_TRUE(out.ok()) << out.status();
      losses[bf16].push_back(out->loss.item<double>());
    }
  }
  // 10-step means: single steps of a fresh model jump around more than precision explains.
  std::string failures;
  std::ostringstream curve;
  for (int w = 0; w < kSteps / kWindow; ++w) {
    double f32 = 0, b16 = 0;
    for (int i = w * kWindow; i < (w + 1) * kWindow; ++i) f32 += losses[0][i], b16 += losses[1][i];
    f32 /= kWindow, b16 /= kWindow;
    curve << " " << f32 << "/" << b16;
    if (std::abs(b16 - f32) > 0.05 + 0.1 * std::abs(f32)) {
      failures += "steps " + std::to_string(w * kWindow) + "-" +
                  std::to_string((w + 1) * kWindow - 1) + ": float32 mean loss " +
                  std::to_string(f32) + ", bf16 " + std::to_string(b16) + "\n";
    }
  }
  std::cout << "[gpu-bf16] device " << device->str() << (use_bf16 ? "" : " (dry run: no bf16)")
            << ", 10-step mean losses float32/bf16:" << curve.str() << "\n";
  EXPECT_EQ(failures, "");
  // Both runs learn the synthetic set (guards against a curve that is close because flat).
  EXPECT_LT(losses[1].back() + losses[1][kSteps - 2], 0.5 * (losses[1][0] + losses[1][1]));
}

}  // namespace
}  // namespace trainyard::train
