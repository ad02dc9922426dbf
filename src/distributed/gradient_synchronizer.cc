#include "distributed/gradient_synchronizer.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <cstdio>
#include <mutex>

namespace trainyard::distributed {

struct GradientSynchronizer::State {
  struct Param {
    std::string name;
    torch::Tensor tensor;
    int bucket = 0;
    int64_t offset = 0;                                  // in elements, within the bucket
    bool ready = false;                                  // its gradient is in the bucket this step
    std::shared_ptr<torch::autograd::Node> accumulator;  // kept alive so the hook stays on it
    uintptr_t hook_key = 0;
  };
  struct Bucket {
    torch::Tensor flat;       // (numel,) same dtype/device as its parameters
    std::vector<int> params;  // indices into `params`
    int pending = 0;          // parameters whose gradient has not arrived yet this step
    bool launched = false;
    PendingCollective op;
  };

  Communicator* comm = nullptr;
  SynchronizerOptions options;
  std::vector<Param> params;  // registration order
  std::vector<Bucket> buckets;

  std::mutex mu;  // guards everything below; hooks may run on autograd worker threads
  bool armed = false;
  int next_launch = 0;
  int launched_in_backward = 0;
  Status hook_error;

  // Starts buckets next_launch.. that are complete (or all of them when `force`), in order.
  void LaunchReady(bool force, bool from_hook) {
    while (next_launch < static_cast<int>(buckets.size())) {
      Bucket& b = buckets[next_launch];
      if (!force && b.pending > 0) return;
      if (force) {
        for (int i : b.params) {
          Param& p = params[i];
          if (p.ready) continue;
          auto slot = b.flat.narrow(0, p.offset, p.tensor.numel());
          if (p.tensor.grad().defined()) {
            slot.copy_(p.tensor.grad().reshape({-1}));
          } else {
            slot.zero_();
          }
        }
      }
      b.launched = true;
      b.op = comm->StartAllReduce(b.flat, ReduceOp::kSum);
      if (from_hook) ++launched_in_backward;
      ++next_launch;
    }
  }

  void OnGradient(int index) {
    std::lock_guard<std::mutex> lock(mu);
    if (!armed) return;
    Param& p = params[index];
    Bucket& b = buckets[p.bucket];
    if (p.ready || b.launched) {
      if (hook_error.ok()) {
        hook_error =
            FailedPreconditionError("parameter '" + p.name +
                                    "' received a second gradient after its bucket was sent; "
                                    "call BeginStep() before each synchronized backward pass");
      }
      return;
    }
    const torch::Tensor& grad = p.tensor.grad();
    if (!grad.defined()) return;  // nothing accumulated (e.g. an undefined incoming grad)
    if (grad.is_sparse()) {
      if (hook_error.ok()) {
        hook_error =
            InvalidArgumentError("parameter '" + p.name + "' has a sparse gradient; not supported");
      }
      return;
    }
    // An exception must not escape into the autograd engine: it becomes FinishStep's Status.
    try {
      b.flat.narrow(0, p.offset, p.tensor.numel()).copy_(grad.reshape({-1}));
      p.ready = true;
      --b.pending;
      LaunchReady(/*force=*/false, /*from_hook=*/true);
    } catch (const std::exception& e) {
      if (hook_error.ok()) {
        hook_error = InternalError("gradient hook for '" + p.name + "' failed: " + e.what());
      }
    }
  }
};

GradientSynchronizer::GradientSynchronizer(std::shared_ptr<State> state)
    : state_(std::move(state)) {}

GradientSynchronizer::~GradientSynchronizer() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->armed = false;
  for (auto& p : state_->params) {
    if (p.accumulator) p.accumulator->del_post_hook(p.hook_key);
  }
}

StatusOr<std::unique_ptr<GradientSynchronizer>> GradientSynchronizer::Create(
    Communicator& comm, const torch::OrderedDict<std::string, torch::Tensor>& named_parameters,
    const SynchronizerOptions& options) {
  auto state = std::make_shared<State>();
  state->comm = &comm;
  state->options = options;
  for (const auto& item : named_parameters) {
    const torch::Tensor& t = item.value();
    if (!t.defined()) return InvalidArgumentError("parameter '" + item.key() + "' is undefined");
    if (!t.requires_grad()) continue;  // frozen: never reduced
    if (t.is_sparse()) {
      return InvalidArgumentError("parameter '" + item.key() + "' is sparse; not supported");
    }
    State::Param p;
    p.name = item.key();
    p.tensor = t;
    state->params.push_back(std::move(p));
  }
  // Buckets in reverse registration order; a bucket closes once it reaches bucket_bytes or the
  // next parameter has another dtype/device (a flat buffer holds one kind).
  const int64_t cap = std::max<int64_t>(1, options.bucket_bytes);
  int64_t bytes = 0;
  for (int i = static_cast<int>(state->params.size()) - 1; i >= 0; --i) {
    State::Param& p = state->params[i];
    bool start_new = state->buckets.empty() || bytes >= cap;
    if (!start_new) {
      const State::Param& first = state->params[state->buckets.back().params.front()];
      start_new = first.tensor.scalar_type() != p.tensor.scalar_type() ||
                  first.tensor.device() != p.tensor.device();
    }
    if (start_new) {
      state->buckets.emplace_back();
      bytes = 0;
    }
    State::Bucket& b = state->buckets.back();
    p.bucket = static_cast<int>(state->buckets.size()) - 1;
    p.offset = 0;
    for (int j : b.params) p.offset += state->params[j].tensor.numel();
    b.params.push_back(i);
    bytes += p.tensor.numel() * static_cast<int64_t>(p.tensor.element_size());
  }
  for (auto& b : state->buckets) {
    const torch::Tensor& first = state->params[b.params.front()].tensor;
    int64_t numel = 0;
    for (int j : b.params) numel += state->params[j].tensor.numel();
    b.flat = torch::zeros({numel}, first.options().requires_grad(false));
  }
  if (options.overlap_with_backward && comm.world_size() > 1) {
    std::weak_ptr<State> weak = state;
    for (size_t i = 0; i < state->params.size(); ++i) {
      State::Param& p = state->params[i];
      p.accumulator = torch::autograd::impl::grad_accumulator(p.tensor);
      if (!p.accumulator) {
        return InvalidArgumentError("parameter '" + p.name +
                                    "' is not a leaf tensor; pass the model's parameters");
      }
      const int index = static_cast<int>(i);
      p.hook_key =
          p.accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
              [weak, index](const torch::autograd::variable_list& outputs,
                            const torch::autograd::variable_list&) {
                if (auto s = weak.lock()) s->OnGradient(index);
                return outputs;
              }));
    }
  }
  return std::unique_ptr<GradientSynchronizer>(new GradientSynchronizer(std::move(state)));
}

void GradientSynchronizer::BeginStep() {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  s.armed = true;
  s.next_launch = 0;
  s.launched_in_backward = 0;
  s.hook_error = Status::Ok();
  for (auto& p : s.params) p.ready = false;
  for (auto& b : s.buckets) {
    b.pending = static_cast<int>(b.params.size());
    b.launched = false;
  }
}

Status GradientSynchronizer::FinishStep() {
  try {
    return FinishStepOrThrow();
  } catch (const std::exception& e) {
    return InternalError(std::string("gradient synchronization failed: ") + e.what());
  }
}

Status GradientSynchronizer::FinishStepOrThrow() {
  State& s = *state_;
  std::unique_lock<std::mutex> lock(s.mu);
  if (!s.armed) {
    return FailedPreconditionError("GradientSynchronizer::FinishStep without BeginStep");
  }
  s.armed = false;
  if (s.comm->world_size() == 1) return s.hook_error;
  // Which parameters have a gradient here; reduced with MAX so every rank decides alike.
  torch::Tensor has_grad = torch::zeros({static_cast<int64_t>(s.params.size())},
                                        torch::TensorOptions().dtype(torch::kFloat));
  for (size_t i = 0; i < s.params.size(); ++i) {
    if (s.params[i].ready || s.params[i].tensor.grad().defined()) has_grad[i] = 1.0f;
  }
  s.LaunchReady(/*force=*/true, /*from_hook=*/false);
  const bool on_cuda = s.comm->backend_name() == "nccl";
  torch::Tensor flags = on_cuda ? has_grad.to(torch::kCUDA) : has_grad;
  PendingCollective flags_op = s.comm->StartAllReduce(flags, ReduceOp::kMax);
  Status status = s.hook_error;
  for (auto& b : s.buckets) {
    Status st = b.op.Wait();
    if (status.ok() && !st.ok()) status = st;
  }
  Status st = flags_op.Wait();
  if (status.ok() && !st.ok()) status = st;
  if (!status.ok()) return status;
  if (on_cuda) has_grad = flags.cpu();
  auto used = has_grad.accessor<float, 1>();
  torch::NoGradGuard no_grad;
  const double world = s.comm->world_size();
  for (auto& b : s.buckets) b.flat.div_(world);
  for (size_t i = 0; i < s.params.size(); ++i) {
    State::Param& p = s.params[i];
    if (used[i] < 0.5f) continue;  // no rank has a gradient: leave it undefined everywhere
    torch::Tensor avg =
        s.buckets[p.bucket].flat.narrow(0, p.offset, p.tensor.numel()).view(p.tensor.sizes());
    if (p.tensor.grad().defined()) {
      p.tensor.mutable_grad().copy_(avg);
    } else {
      p.tensor.mutable_grad() = avg.clone();
    }
  }
  return Status::Ok();
}

int GradientSynchronizer::bucket_count() const { return static_cast<int>(state_->buckets.size()); }

std::vector<std::vector<std::string>> GradientSynchronizer::BucketLayout() const {
  std::vector<std::vector<std::string>> out;
  for (const auto& b : state_->buckets) {
    out.emplace_back();
    for (int i : b.params) out.back().push_back(state_->params[i].name);
  }
  return out;
}

int GradientSynchronizer::buckets_launched_during_backward() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->launched_in_backward;
}

Status BroadcastFromRankZero(Communicator& comm,
                             const torch::OrderedDict<std::string, torch::Tensor>& parameters,
                             const torch::OrderedDict<std::string, torch::Tensor>& buffers) {
  if (comm.world_size() == 1) return Status::Ok();
  torch::NoGradGuard no_grad;
  for (const auto* dict : {&parameters, &buffers}) {
    for (const auto& item : *dict) {
      torch::Tensor t = item.value();
      if (!t.defined() || t.numel() == 0) continue;
      // Broadcast into a contiguous copy so non-contiguous views are handled too.
      torch::Tensor buffer = t.detach().contiguous().clone();
      TY_RETURN_IF_ERROR(
          comm.Broadcast(buffer, 0).WithPrefix("initial broadcast of '" + item.key() + "'"));
      t.detach().copy_(buffer);
    }
  }
  return Status::Ok();
}

Status CheckReplicasIdentical(Communicator& comm,
                              const torch::OrderedDict<std::string, torch::Tensor>& tensors,
                              double tolerance) {
  if (comm.world_size() == 1) return Status::Ok();
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> pieces;
  std::vector<std::string> names;
  for (const auto& item : tensors) {
    if (!item.value().defined()) continue;
    pieces.push_back(item.value().detach().reshape({-1}).to(torch::kDouble));
    names.push_back(item.key());
  }
  if (pieces.empty()) return Status::Ok();
  torch::Tensor mine = torch::cat(pieces);
  torch::Tensor reference = mine.clone();
  TY_RETURN_IF_ERROR(comm.Broadcast(reference, 0).WithPrefix("replica check"));
  torch::Tensor abs_diff = (mine - reference).abs();
  const auto device = mine.device();
  torch::Tensor diff = torch::zeros({static_cast<int64_t>(pieces.size())},
                                    torch::TensorOptions().dtype(torch::kDouble).device(device));
  int64_t offset = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const int64_t n = pieces[i].numel();
    if (n > 0) diff[i] = abs_diff.narrow(0, offset, n).max();
    offset += n;
  }
  // A NaN on one rank only is a divergence too: count it as infinitely far.
  diff = torch::nan_to_num(diff, std::numeric_limits<double>::infinity());
  torch::Tensor global = diff.clone();
  TY_RETURN_IF_ERROR(comm.AllReduce(global, ReduceOp::kMax).WithPrefix("replica check"));
  global = global.cpu();
  int first = -1;
  for (int64_t i = 0; i < global.numel(); ++i) {
    if (global[i].item<double>() > tolerance) {
      first = static_cast<int>(i);
      break;
    }
  }
  // Which rank diverged (the highest one holding the maximum).
  torch::Tensor who =
      torch::full({1}, -1.0, torch::TensorOptions().dtype(torch::kDouble).device(device));
  if (first >= 0 && diff[first].item<double>() == global[first].item<double>()) {
    who.fill_(comm.rank());
  }
  TY_RETURN_IF_ERROR(comm.AllReduce(who, ReduceOp::kMax).WithPrefix("replica check"));
  if (first < 0) return Status::Ok();
  char amount[64];
  std::snprintf(amount, sizeof(amount), "%.3g", global[first].item<double>());
  return DataLossError("replicas diverged: '" + names[first] + "' differs on rank " +
                       std::to_string(static_cast<int>(who.item<double>())) +
                       " by max |w - w_rank0| = " + amount + " (tolerance " +
                       std::to_string(tolerance) + "; first diverging tensor in model order)");
}

}  // namespace trainyard::distributed
