#include "distributed/communicator.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cstdlib>
#include <sstream>

namespace trainyard::distributed {
namespace {

std::string Seconds(std::chrono::milliseconds ms) {
  std::ostringstream out;
  if (ms.count() % 1000 == 0) {
    out << ms.count() / 1000 << "s";
  } else {
    out << ms.count() / 1000.0 << "s";
  }
  return out.str();
}

bool Contains(const std::string& text, const char* needle) {
  return text.find(needle) != std::string::npos;
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

c10d::ReduceOp ToC10d(ReduceOp op) {
  return op == ReduceOp::kMax ? c10d::ReduceOp(c10d::ReduceOp::MAX)
                              : c10d::ReduceOp(c10d::ReduceOp::SUM);
}

}  // namespace

Status ApplyTimeoutFromEnvironment(const EnvMap& env, CommunicatorOptions& options) {
  auto it = env.find("TRAINYARD_COLLECTIVE_TIMEOUT_S");
  if (it == env.end() || it->second.empty()) return Status::Ok();
  char* end = nullptr;
  double seconds = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0' || !(seconds > 0) || seconds > 86400 * 7) {
    return InvalidArgumentError(
        "TRAINYARD_COLLECTIVE_TIMEOUT_S: expected seconds > 0 (e.g. 300), "
        "got \"" +
        it->second + "\"");
  }
  options.timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// PendingCollective

PendingCollective::PendingCollective(PendingCollective&& other) noexcept {
  *this = std::move(other);
}

PendingCollective& PendingCollective::operator=(PendingCollective&& other) noexcept {
  if (this != &other) {
    if (!done_) (void)Wait();
    owner_ = other.owner_;
    what_ = std::move(other.what_);
    work_ = std::move(other.work_);
    done_ = other.done_;
    status_ = std::move(other.status_);
    other.done_ = true;
    other.owner_ = nullptr;
  }
  return *this;
}

PendingCollective::~PendingCollective() {
  if (!done_) (void)Wait();
}

Status PendingCollective::Wait() {
  if (done_) return status_;
  done_ = true;
  status_ = owner_->Finish(what_, work_);
  work_.reset();
  return status_;
}

// ---------------------------------------------------------------------------------------------
// Communicator

Communicator::Communicator(int rank, int world_size, CommunicatorOptions options)
    : rank_(rank), world_size_(world_size), options_(std::move(options)) {}

Communicator::~Communicator() = default;

StatusOr<std::unique_ptr<Communicator>> Communicator::Connect(const DistributedConfig& config,
                                                              const CommunicatorOptions& options) {
  std::unique_ptr<Communicator> comm(new Communicator(config.rank, config.world_size, options));
  if (!config.distributed()) return comm;
  if (options.timeout.count() <= 0) {
    return InvalidArgumentError("collective timeout must be > 0");
  }
  bool want_nccl = options.backend == Backend::kNccl;
  if (options.backend == Backend::kAuto) want_nccl = torch::cuda::is_available();
#ifndef USE_C10D_NCCL
  if (options.backend == Backend::kNccl) {
    return FailedPreconditionError(
        "the NCCL backend was requested but this LibTorch has no NCCL support (Debian's "
        "libtorch is CPU-only); use the gloo backend or build against a CUDA LibTorch");
  }
  want_nccl = false;
#endif
  const std::string where =
      "rank " + std::to_string(config.rank) + "/" + std::to_string(config.world_size) + ": ";
  try {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(config.master_port);
    store_options.isServer = config.rank == 0;
    store_options.numWorkers = static_cast<size_t>(config.world_size);
    store_options.waitWorkers = true;
    store_options.timeout = options.rendezvous_timeout;
    model::compat::UseClassicTcpStore(store_options);
    comm->store_ = c10::make_intrusive<c10d::TCPStore>(config.master_addr, store_options);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    std::string hint = config.rank == 0 ? "is MASTER_PORT free and did every rank start? (waited " +
                                              Seconds(options.rendezvous_timeout) + ")"
                                        : "is rank 0 running and reachable? (waited " +
                                              Seconds(options.rendezvous_timeout) + ")";
    return UnavailableError(where + "rendezvous at " + config.master_addr + ":" +
                            std::to_string(config.master_port) +
                            " failed: " + what.substr(0, what.find('\n')) + " — " + hint);
  }
  try {
    if (want_nccl) {
#ifdef USE_C10D_NCCL
      auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
      nccl_options->timeout = options.timeout;
      comm->group_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(comm->store_, config.rank,
                                                                 config.world_size, nccl_options);
      comm->nccl_ = true;
#endif
    } else {
      auto gloo_options = c10d::ProcessGroupGloo::Options::create(options.timeout);
      // Bind where peers can reach us: the interface named like torch does, loopback for a
      // job on one machine, else the address this host's name resolves to.
      if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
        gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      } else if (IsLoopback(config.master_addr)) {
        gloo_options->devices.push_back(
            c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      } else {
        gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      comm->group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(comm->store_, config.rank,
                                                                 config.world_size, gloo_options);
    }
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return UnavailableError(
        where + "connecting to the other ranks failed: " + what.substr(0, what.find('\n')) +
        " (a peer died during startup, or "
        "GLOO_SOCKET_IFNAME names the wrong interface)");
  }
  return comm;
}

std::string Communicator::backend_name() const {
  if (world_size_ == 1) return "none";
  return nccl_ ? "nccl" : "gloo";
}

Status Communicator::health() const {
  std::lock_guard<std::mutex> lock(mu_);
  return broken_;
}

std::string Communicator::Describe(const std::string& what) const {
  return "rank " + std::to_string(rank_) + "/" + std::to_string(world_size_) + ": " + what;
}

PendingCollective Communicator::Fail(const std::string& what, Status status) {
  PendingCollective op;
  op.owner_ = this;
  op.what_ = what;
  op.status_ = std::move(status);
  return op;
}

PendingCollective Communicator::StartAllReduce(torch::Tensor tensor, ReduceOp op) {
  const std::string what = std::string(op == ReduceOp::kMax ? "all-reduce(max)" : "all-reduce") +
                           " of " + std::to_string(tensor.numel()) + " elements";
  if (Status h = health(); !h.ok()) return Fail(what, h);
  if (world_size_ == 1) return Fail(what, Status::Ok());
  try {
    std::vector<at::Tensor> tensors{tensor};
    c10d::AllreduceOptions opts;
    opts.reduceOp = ToC10d(op);
    opts.timeout = options_.timeout;
    PendingCollective pending;
    pending.owner_ = this;
    pending.what_ = what;
    pending.work_ = group_->allreduce(tensors, opts);
    pending.done_ = false;
    return pending;
  } catch (const std::exception& e) {
    Status s = InternalError(Describe(what + " could not start: " + e.what()));
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_.ok()) broken_ = s;
    return Fail(what, s);
  }
}

Status Communicator::Finish(const std::string& what, const c10::intrusive_ptr<c10d::Work>& work) {
  std::string error;
  try {
    // Gloo enforces opts.timeout itself; the explicit bound also covers backends that do not.
    if (!work->wait(options_.timeout + std::chrono::seconds(5))) error = "wait returned false";
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (error.empty()) return Status::Ok();
  error = error.substr(0, error.find('\n'));
  Status s;
  const std::string timeout = Seconds(options_.timeout);
  if (Contains(error, "imed out") || Contains(error, "imeout")) {
    s = DeadlineExceededError(Describe(what + " timed out after " + timeout +
                                       " — a peer is dead or hung (" + error + ")"));
  } else if (Contains(error, "closed") || Contains(error, "reset") || Contains(error, "EOF") ||
             Contains(error, "Broken pipe") || Contains(error, "Connection")) {
    s = UnavailableError(Describe(what +
                                  " failed: a peer closed its connection — it died or "
                                  "was killed (" +
                                  error + ")"));
  } else {
    s = UnavailableError(Describe(what + " failed: " + error));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (broken_.ok()) {
    broken_ = FailedPreconditionError(
        Describe("communicator unusable after an earlier failure: " + s.message()));
  }
  return s;
}

Status Communicator::AllReduce(torch::Tensor tensor, ReduceOp op) {
  return StartAllReduce(std::move(tensor), op).Wait();
}

Status Communicator::Broadcast(torch::Tensor tensor, int root) {
  const std::string what = "broadcast from rank " + std::to_string(root) + " of " +
                           std::to_string(tensor.numel()) + " elements";
  if (Status h = health(); !h.ok()) return h;
  if (world_size_ == 1) return Status::Ok();
  c10::intrusive_ptr<c10d::Work> work;
  try {
    std::vector<at::Tensor> tensors{tensor};
    c10d::BroadcastOptions opts;
    opts.rootRank = root;
    opts.timeout = options_.timeout;
    work = group_->broadcast(tensors, opts);
  } catch (const std::exception& e) {
    return InternalError(Describe(what + " could not start: " + e.what()));
  }
  return Finish(what, work);
}

Status Communicator::Barrier() {
  // An all-reduce of one element rather than c10d's barrier: it obeys the same timeout and
  // error mapping on every backend.
  torch::Tensor one =
      torch::ones({1}, torch::TensorOptions().device(nccl_ ? torch::kCUDA : torch::kCPU));
  return AllReduce(one, ReduceOp::kSum);
}

StatusOr<bool> AgreeToStop(Communicator& comm, bool local_stop) {
  if (comm.world_size() == 1) return local_stop;
  torch::Tensor flag = torch::full(
      {1}, local_stop ? 1.0f : 0.0f,
      torch::TensorOptions().device(comm.backend_name() == "nccl" ? torch::kCUDA : torch::kCPU));
  TY_RETURN_IF_ERROR(comm.AllReduce(flag, ReduceOp::kMax).WithPrefix("stop-flag agreement"));
  return flag.item<float>() > 0.5f;
}

}  // namespace trainyard::distributed
