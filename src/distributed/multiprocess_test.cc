// Multi-process tests: each case forks its ranks (the parent stays torch-free, so no OpenMP
// state crosses a fork), they rendezvous on 127.0.0.1 at a free port, and each rank writes a
// one-line result file that the parent compares.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "distributed/communicator.h"
#include "distributed/gradient_synchronizer.h"
#include "distributed/shard.h"
#include "testing/test_util.h"

namespace trainyard::distributed {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

DistributedConfig Config(int rank, int world, int port) {
  DistributedConfig c;
  c.rank = rank;
  c.world_size = world;
  c.master_addr = "127.0.0.1";
  c.master_port = port;
  c.source = "test";
  return c;
}

// A rank's body: returns the line to record.
using RankBody = std::function<std::string(const DistributedConfig&)>;

struct Launch {
  std::vector<pid_t> pids;
  fs::path dir;
};

Launch Start(int world, const RankBody& body, const fs::path& dir) {
  Launch launch;
  launch.dir = dir;
  const int port = FreePort();
  for (int rank = 0; rank < world; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      std::string line;
      try {
        torch::set_num_threads(1);
        line = body(Config(rank, world, port));
      } catch (const std::exception& e) {
        line = std::string("EXCEPTION: ") + e.what();
      }
      std::ofstream(dir / ("rank" + std::to_string(rank))) << line;
      _exit(0);
    }
    launch.pids.push_back(pid);
  }
  return launch;
}

// Waits for every rank (killing stragglers after `limit`) and returns "r0-line || r1-line".
std::string Collect(const Launch& launch, std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto deadline = Clock::now() + limit;
  std::vector<bool> done(launch.pids.size(), false);
  size_t remaining = launch.pids.size();
  while (remaining > 0) {
    for (size_t i = 0; i < launch.pids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      if (waitpid(launch.pids[i], &status, WNOHANG) == launch.pids[i]) {
        done[i] = true;
        --remaining;
      } else if (Clock::now() > deadline) {
        kill(launch.pids[i], SIGKILL);
        waitpid(launch.pids[i], &status, 0);
        done[i] = true;
        --remaining;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string out;
  for (size_t i = 0; i < launch.pids.size(); ++i) {
    fs::path file = launch.dir / ("rank" + std::to_string(i));
    out += (i ? " || " : "") +
           (fs::exists(file) ? testing::ReadFileOrDie(file) : std::string("<no result>"));
  }
  return out;
}

std::string RunRanks(int world, const RankBody& body) {
  fs::path dir = testing::MakeTestDir();
  return Collect(Start(world, body, dir));
}

std::unique_ptr<Communicator> ConnectOrThrow(const DistributedConfig& config,
                                             CommunicatorOptions options = {}) {
  options.rendezvous_timeout = std::chrono::seconds(20);
  auto comm = Communicator::Connect(config, options);
  if (!comm.ok()) throw std::runtime_error(comm.status().ToString());
  return std::move(*comm);
}

std::string Values(const torch::Tensor& t) {
  std::ostringstream out;
  auto c = t.to(torch::kDouble).contiguous();
  for (int64_t i = 0; i < c.numel(); ++i) out << (i ? "," : "") << c.data_ptr<double>()[i];
  return out.str();
}

TEST(MultiProcessTest, AllReduceBroadcastAndStopAgreement) {
  std::string result = RunRanks(2, [](const DistributedConfig& config) {
    auto comm = ConnectOrThrow(config);
    torch::Tensor sum = torch::full({3}, config.rank + 1.0f);
    Status s1 = comm->AllReduce(sum, ReduceOp::kSum);
    torch::Tensor max = torch::tensor({config.rank * 5.0f, 1.0f});
    Status s2 = comm->AllReduce(max, ReduceOp::kMax);
    torch::Tensor b = torch::full({2}, config.rank * 7.0f);
    Status s3 = comm->Broadcast(b, 1);
    auto stop_if_rank1 = AgreeToStop(*comm, config.rank == 1);
    auto nobody = AgreeToStop(*comm, false);
    return s1.ToString() + s2.ToString() + s3.ToString() + " sum=" + Values(sum) +
           " max=" + Values(max) + " bcast=" + Values(b) +
           " stop=" + std::to_string(*stop_if_rank1) + std::to_string(*nobody) + " " +
           comm->backend_name();
  });
  EXPECT_EQ(result,
            "OKOKOK sum=3,3,3 max=5,1 bcast=7,7 stop=10 gloo || "
            "OKOKOK sum=3,3,3 max=5,1 bcast=7,7 stop=10 gloo");
}

// --- Synchronizer: W workers x batch B/W == 1 worker x batch B ---------------------------------

struct Net : torch::nn::Module {
  Net() {
    l1 = register_module("l1", torch::nn::Linear(6, 12));
    l2 = register_module("l2", torch::nn::Linear(12, 12));
    head = register_module("head", torch::nn::Linear(12, 3));
  }
  torch::Tensor forward(torch::Tensor x) {  // (B, 6) -> (B, 3)
    return head(torch::tanh(l2(torch::tanh(l1(x)))));
  }
  torch::nn::Linear l1{nullptr}, l2{nullptr}, head{nullptr};
};

// Trains `steps` steps of global batch `global_batch` on a fixed synthetic set; returns the
// flattened final weights, the bucket count and how many buckets overlapped backward.
std::string TrainNet(const DistributedConfig& config, bool freeze_l1, int steps) {
  const int64_t global_batch = 8, n = 40;
  torch::manual_seed(1234 + config.rank);  // ranks differ until the broadcast
  auto net = std::make_shared<Net>();
  // float64 so that the only difference between 1 and 2 workers is summation order (~1e-16),
  // far below the 1e-6 tolerance; a wrong shard or average is off by ~1e-2.
  net->to(torch::kDouble);
  torch::Tensor l1_initial;
  if (freeze_l1) {
    for (auto& p : net->l1->parameters()) p.set_requires_grad(false);
  }
  torch::manual_seed(99);  // the data is the same everywhere
  torch::Tensor x = torch::randn({n, 6}, torch::kDouble);
  torch::Tensor y = torch::randint(0, 3, {n});
  auto comm = ConnectOrThrow(config);
  Status s = BroadcastFromRankZero(*comm, net->named_parameters(), net->named_buffers());
  if (!s.ok()) return s.ToString();
  l1_initial = net->l1->weight.detach().clone();
  SynchronizerOptions options;
  options.bucket_bytes = 400;  // 3 buckets: [head.*, l2.bias] [l2.weight] [l1.*]
  auto sync = GradientSynchronizer::Create(*comm, net->named_parameters(), options);
  if (!sync.ok()) return sync.status().ToString();
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.2).momentum(0.9));
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = (i * 7) % n;  // a fixed "shuffle"
  auto shard = ShardIndices(perm, config.rank, config.world_size);
  const int64_t local_batch = global_batch / config.world_size;
  int overlapped = 0;
  for (int step = 0; step < steps; ++step) {
    std::vector<int64_t> idx(shard->begin() + step * local_batch,
                             shard->begin() + (step + 1) * local_batch);
    torch::Tensor ids = torch::tensor(idx);
    sgd.zero_grad();
    (*sync)->BeginStep();
    torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(x.index_select(0, ids)),
                                                              y.index_select(0, ids));
    loss.backward();
    s = (*sync)->FinishStep();
    if (!s.ok()) return s.ToString();
    overlapped += (*sync)->buckets_launched_during_backward();
    sgd.step();
  }
  s = CheckReplicasIdentical(*comm, net->named_parameters());
  std::ostringstream out;
  out << "check=" << s.ToString() << " buckets=" << (*sync)->bucket_count()
      << " overlapped=" << (overlapped > 0)
      << " l1_unchanged=" << torch::equal(l1_initial, net->l1->weight.detach()) << " w=";
  std::vector<torch::Tensor> flat;
  for (auto& p : net->parameters()) flat.push_back(p.detach().reshape({-1}));
  torch::Tensor all = torch::cat(flat);
  out.precision(17);
  for (int64_t i = 0; i < all.numel(); ++i) out << (i ? "," : "") << all[i].item<double>();
  return out.str();
}

// Compares two weight lists (after "w=") within `tol`; returns "" or the first difference.
std::string CompareWeights(const std::string& a, const std::string& b, double tol) {
  auto parse = [](const std::string& s) {
    std::vector<double> v;
    std::stringstream in(s.substr(s.find("w=") + 2));
    std::string item;
    while (std::getline(in, item, ',')) v.push_back(std::stod(item));
    return v;
  };
  auto va = parse(a), vb = parse(b);
  if (va.size() != vb.size() || va.empty()) return "sizes differ";
  for (size_t i = 0; i < va.size(); ++i) {
    if (std::abs(va[i] - vb[i]) > tol) {
      return "weight " + std::to_string(i) + ": " + std::to_string(va[i]) + " vs " +
             std::to_string(vb[i]);
    }
  }
  return "";
}

std::string Prefix(const std::string& line) { return line.substr(0, line.find(" w=")); }

void ExpectTwoWorkersMatchOne(bool freeze_l1) {
  const int steps = 5;
  std::string single =
      RunRanks(1, [&](const DistributedConfig& c) { return TrainNet(c, freeze_l1, steps); });
  std::string pair =
      RunRanks(2, [&](const DistributedConfig& c) { return TrainNet(c, freeze_l1, steps); });
  std::string r0 = pair.substr(0, pair.find(" || "));
  std::string r1 = pair.substr(pair.find(" || ") + 4);
  ASSERT_NE(single.find("w="), std::string::npos) << single;
  ASSERT_NE(r0.find("w="), std::string::npos) << pair;
  ASSERT_NE(r1.find("w="), std::string::npos) << pair;
  const std::string expected = std::string("check=OK buckets=") + (freeze_l1 ? "2" : "3") +
                               " overlapped=1 l1_unchanged=" + (freeze_l1 ? "1" : "0");
  EXPECT_EQ(Prefix(r0) + " | " + Prefix(r1) + " | " + CompareWeights(single, r0, 1e-6) +
                CompareWeights(r0, r1, 0.0),
            expected + " | " + expected + " | ");
}

TEST(MultiProcessTest, TwoWorkersMatchOneWorkerWithTheGlobalBatch) {
  ExpectTwoWorkersMatchOne(false);
}

TEST(MultiProcessTest, FrozenLayersStayFrozenAndIdentical) { ExpectTwoWorkersMatchOne(true); }

TEST(MultiProcessTest, ParametersWithoutGradientsAgreeAcrossRanks) {
  std::string result = RunRanks(2, [](const DistributedConfig& config) {
    auto comm = ConnectOrThrow(config);
    auto used_by_rank0 = torch::ones({2}, torch::requires_grad());
    auto never_used = torch::ones({2}, torch::requires_grad());
    auto always = torch::ones({2}, torch::requires_grad());
    torch::OrderedDict<std::string, torch::Tensor> params;
    params.insert("used_by_rank0", used_by_rank0);
    params.insert("never_used", never_used);
    params.insert("always", always);
    auto sync = GradientSynchronizer::Create(*comm, params);
    (*sync)->BeginStep();
    torch::Tensor loss = (always * (config.rank + 1.0)).sum();
    if (config.rank == 0) loss = loss + (used_by_rank0 * 4.0).sum();
    loss.backward();
    Status s = (*sync)->FinishStep();
    return s.ToString() + " used_by_rank0=" + Values(used_by_rank0.grad()) +
           " never_used=" + (never_used.grad().defined() ? "defined" : "undefined") +
           " always=" + Values(always.grad());
  });
  EXPECT_EQ(result,
            "OK used_by_rank0=2,2 never_used=undefined always=1.5,1.5 || "
            "OK used_by_rank0=2,2 never_used=undefined always=1.5,1.5");
}

TEST(MultiProcessTest, CheckReplicasNamesTheFirstDivergingParameter) {
  std::string result = RunRanks(2, [](const DistributedConfig& config) {
    auto comm = ConnectOrThrow(config);
    torch::manual_seed(5);
    Net net;
    if (config.rank == 1) {
      torch::NoGradGuard no_grad;
      net.l2->bias[3] += 1e-3f;
      net.head->weight[0][0] += 1.0f;
    }
    return CheckReplicasIdentical(*comm, net.named_parameters()).ToString();
  });
  const std::string expected =
      "DATA_LOSS: replicas diverged: 'l2.bias' differs on rank 1 by max |w - w_rank0| = 0.001 "
      "(tolerance 0.000000; first diverging tensor in model order)";
  EXPECT_EQ(result, expected + " || " + expected);
}

// --- Failures: a dead or hung peer becomes a Status within the timeout ----------------------

std::string SurvivorOfPeer(int peer_signal, Launch* launch_out, const fs::path& dir) {
  *launch_out = Start(
      2,
      [peer_signal](const DistributedConfig& config) {
        CommunicatorOptions options;
        options.timeout = std::chrono::seconds(3);
        auto comm = ConnectOrThrow(config, options);
        torch::Tensor t = torch::ones({1000});
        Status warmup = comm->AllReduce(t, ReduceOp::kSum);
        if (config.rank == 1) raise(peer_signal);  // dies, or hangs until the parent kills it
        auto start = Clock::now();
        Status s = comm->AllReduce(t, ReduceOp::kSum);
        double waited = std::chrono::duration<double>(Clock::now() - start).count();
        Status after = comm->AllReduce(t, ReduceOp::kSum);
        std::ostringstream out;
        out << warmup.ToString() << " | " << s.ToString()
            << " | within_limit=" << (waited < 3.0 + 2.0)
            << " | later: " << StatusCodeName(after.code());
        return out.str();
      },
      dir);
  // Rank 0 finishes on its own; then the (stopped) peer is cleaned up.
  int status = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (waitpid(launch_out->pids[0], &status, WNOHANG) == 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(launch_out->pids[0], SIGKILL);
  kill(launch_out->pids[1], SIGKILL);
  waitpid(launch_out->pids[0], &status, 0);
  waitpid(launch_out->pids[1], &status, 0);
  fs::path file = dir / "rank0";
  return fs::exists(file) ? testing::ReadFileOrDie(file) : "<no result from rank 0>";
}

TEST(MultiProcessTest, HungPeerBecomesDeadlineExceeded) {
  Launch launch;
  std::string r0 = SurvivorOfPeer(SIGSTOP, &launch, testing::MakeTestDir());
  EXPECT_EQ(r0.substr(0, r0.find(" (")) + r0.substr(r0.find(") |")),
            "OK | DEADLINE_EXCEEDED: rank 0/2: all-reduce of 1000 elements timed out after 3s — "
            "a peer is dead or hung) | within_limit=1 | later: FAILED_PRECONDITION");
}

TEST(MultiProcessTest, KilledPeerBecomesAnErrorNotAHang) {
  Launch launch;
  std::string r0 = SurvivorOfPeer(SIGKILL, &launch, testing::MakeTestDir());
  // A killed peer's sockets are closed by the kernel: reported at once as a lost peer (or, if
  // the close goes unseen, by the timeout). Either way: rank 0, the operation, and no hang.
  EXPECT_TRUE(r0.rfind("OK | UNAVAILABLE: rank 0/2: all-reduce of 1000 elements failed: a peer "
                       "closed its connection",
                       0) == 0 ||
              r0.rfind("OK | DEADLINE_EXCEEDED: rank 0/2: all-reduce of 1000 elements timed "
                       "out after 3s",
                       0) == 0)
      << r0;
  EXPECT_NE(r0.find("within_limit=1 | later: FAILED_PRECONDITION"), std::string::npos) << r0;
}

}  // namespace
}  // namespace trainyard::distributed
