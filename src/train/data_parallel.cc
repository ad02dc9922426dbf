#include "train/data_parallel.h"

#include <algorithm>
#include <cstdlib>

#include "distributed/shard.h"
#include "model/cpu_runtime.h"

namespace trainyard::train {
namespace {

// A positive integer from the environment, or 0 when unset/malformed.
int PositiveInt(const distributed::EnvMap& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end()) return 0;
  char* end = nullptr;
  long v = std::strtol(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0' || v <= 0 || v > 4096) return 0;
  return static_cast<int>(v);
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

}  // namespace

StatusOr<std::unique_ptr<DataParallel>> DataParallel::Connect(const distributed::EnvMap& env,
                                                              const DataParallelOptions& options) {
  TY_ASSIGN_OR_RETURN(distributed::DistributedConfig config,
                      distributed::ConfigFromEnvironment(env));
  distributed::CommunicatorOptions comm_options;
  TY_RETURN_IF_ERROR(distributed::ApplyTimeoutFromEnvironment(env, comm_options));
  if (options.collective_timeout_s > 0) {
    comm_options.timeout =
        std::chrono::milliseconds(static_cast<int64_t>(options.collective_timeout_s * 1000));
  }
  TY_ASSIGN_OR_RETURN(auto comm, distributed::Communicator::Connect(config, comm_options));
  return std::unique_ptr<DataParallel>(
      new DataParallel(std::move(config), options, std::move(comm)));
}

std::string DataParallel::Describe() const {
  if (!distributed()) return "single process";
  return config_.Describe() + ", " + comm_->backend_name() + " backend, collective timeout " +
         std::to_string(comm_->timeout().count() / 1000) + "s";
}

int DataParallel::DefaultThreadCount(const distributed::EnvMap& env) const {
  if (int omp = PositiveInt(env, "OMP_NUM_THREADS"); omp > 0) return omp;
  const int cpus = model::UsableCpuCount();
  int sharing = PositiveInt(env, "LOCAL_WORLD_SIZE");
  if (sharing == 0 && distributed() && IsLoopback(config_.master_addr)) sharing = world_size();
  return std::max(1, cpus / std::max(1, sharing));
}

std::vector<int32_t> DataParallel::LocalBatch(const std::vector<int32_t>& global_batch) const {
  if (!distributed()) return global_batch;
  std::vector<int64_t> global(global_batch.begin(), global_batch.end());
  // rank/world come from a validated config, so ShardIndices cannot fail here.
  std::vector<int64_t> local = distributed::ShardIndices(global, rank(), world_size()).value();
  return std::vector<int32_t>(local.begin(), local.end());
}

Status DataParallel::Attach(const torch::OrderedDict<std::string, torch::Tensor>& parameters,
                            const torch::OrderedDict<std::string, torch::Tensor>& buffers) {
  if (!distributed()) return Status::Ok();
  TY_RETURN_IF_ERROR(distributed::BroadcastFromRankZero(*comm_, parameters, buffers)
                         .WithPrefix("copying rank 0's weights to every replica"));
  TY_ASSIGN_OR_RETURN(sync_, distributed::GradientSynchronizer::Create(*comm_, parameters));
  return Status::Ok();
}

void DataParallel::BeginStep() {
  if (sync_) sync_->BeginStep();
}

Status DataParallel::FinishStep() {
  if (!sync_) return Status::Ok();
  return sync_->FinishStep().WithPrefix("gradient all-reduce");
}

Status DataParallel::CheckReplicas(
    const torch::OrderedDict<std::string, torch::Tensor>& parameters) {
  if (!distributed() || !options_.check_replicas) return Status::Ok();
  return distributed::CheckReplicasIdentical(*comm_, parameters)
      .WithPrefix("--check-replicas (replicas diverged)");
}

torch::TensorOptions DataParallel::CollectiveOptions() const {
  return torch::TensorOptions()
      .dtype(torch::kDouble)
      .device(comm_->backend_name() == "nccl" ? torch::kCUDA : torch::kCPU);
}

StatusOr<DataParallel::StepStats> DataParallel::ReduceStep(const StepStats& local) {
  if (!distributed()) return local;
  std::vector<double> values = {local.loss_sum, static_cast<double>(local.correct),
                                static_cast<double>(local.count), local.stop ? 1.0 : 0.0};
  TY_RETURN_IF_ERROR(SumOverRanks(values).WithPrefix("step statistics"));
  StepStats global;
  global.loss_sum = values[0];
  // Counts are exact in a double far beyond any dataset size.
  global.correct = static_cast<int64_t>(values[1] + 0.5);
  global.count = static_cast<int64_t>(values[2] + 0.5);
  global.stop = values[3] > 0.5;
  return global;
}

StatusOr<bool> DataParallel::AgreeToStop(bool local_stop) {
  if (!distributed()) return local_stop;
  return distributed::AgreeToStop(*comm_, local_stop);
}

Status DataParallel::SumOverRanks(std::vector<double>& values) {
  if (!distributed() || values.empty()) return Status::Ok();
  torch::Tensor t =
      torch::tensor(values, torch::TensorOptions().dtype(torch::kDouble)).to(CollectiveOptions());
  TY_RETURN_IF_ERROR(comm_->AllReduce(t, distributed::ReduceOp::kSum));
  t = t.to(torch::kCPU).contiguous();
  std::copy(t.data_ptr<double>(), t.data_ptr<double>() + values.size(), values.begin());
  return Status::Ok();
}

Status DataParallel::CheckSameOnAllRanks(const std::vector<int64_t>& values,
                                         const std::string& what) {
  if (!distributed() || values.empty()) return Status::Ok();
  // max(v) and max(-v) in one all-reduce: equal everywhere iff max == -max(-v) == min.
  std::vector<double> both;
  for (int64_t v : values) both.push_back(static_cast<double>(v));
  for (int64_t v : values) both.push_back(-static_cast<double>(v));
  torch::Tensor t =
      torch::tensor(both, torch::TensorOptions().dtype(torch::kDouble)).to(CollectiveOptions());
  TY_RETURN_IF_ERROR(comm_->AllReduce(t, distributed::ReduceOp::kMax).WithPrefix(what));
  t = t.to(torch::kCPU).contiguous();
  const double* p = t.data_ptr<double>();
  const size_t n = values.size();
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != -p[n + i]) {
      return FailedPreconditionError(
          "rank " + std::to_string(rank()) + "/" + std::to_string(world_size()) + ": " + what +
          " differs between replicas (this rank: " + std::to_string(values[i]) + ", range " +
          std::to_string(static_cast<int64_t>(-p[n + i])) + ".." +
          std::to_string(static_cast<int64_t>(p[i])) + ")");
    }
  }
  return Status::Ok();
}

Status DataParallel::Barrier() {
  if (!distributed()) return Status::Ok();
  return comm_->Barrier();
}

}  // namespace trainyard::train
