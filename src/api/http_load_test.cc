// Issue #46 item 4, "a server that never blocks on a waiting client": with 200 log streams waiting
// and 200 keep-alive connections idle, /healthz and /readyz still answer, and the streams then end
// with correct pages. No timing thresholds: a starved server would leave /healthz unanswered
// until the streams end, which here is only after /healthz has answered (the test would hang
// until ctest's timeout, or fail on the connections' receive timeout).
#include "api/api_server.h"
// Before cpp-httplib's header (it brings Eigen; see api_server.h).
#include "controller/tuning_job_controller.h"
// clang-format off
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
// clang-format on

#include <map>
#include <thread>

#include "controller/operation_controller.h"
#include "executor/fake_executor.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

constexpr const char* kJobs = "/v1/projects/p/locations/us-central1/customJobs";
constexpr const char* kJob =
    R"({"displayName":"d","jobSpec":{"workerPoolSpecs":[
  {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
   "containerSpec":{"imageUri":"local","command":["echo","hi"]}}]}})";

// One HTTP/1.1 connection the test drives by hand, so that a request can be left waiting (or a
// connection idle) without a client thread per connection. Receives give up after two minutes:
// the test's own generous bound, far above any healthy answer.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{120, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) Close();
  }
  ~RawConnection() { Close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool Send(const std::string& method, const std::string& path, const std::string& body = "") {
    const std::string request =
        method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\n\r\n" + body;
    return fd_ >= 0 && ::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) ==
                           static_cast<ssize_t>(request.size());
  }
  // "<status> <body as compact JSON>", or "error" if no complete response came.
  std::string Read() {
    size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return "error";
    }
    const std::string head = buffer_.substr(0, end);
    const size_t at = head.find("Content-Length: ");
    const size_t length = at == std::string::npos ? 0 : std::stoul(head.substr(at + 16));
    while (buffer_.size() < end + 4 + length) {
      if (!Fill()) return "error";
    }
    const std::string status = head.size() > 12 ? head.substr(9, 3) : "?";
    json body = json::parse(buffer_.substr(end + 4, length), nullptr, false);
    buffer_.erase(0, end + 4 + length);
    return status + " " + body.dump();
  }

 private:
  bool Fill() {
    char chunk[4096];
    const ssize_t n = fd_ < 0 ? -1 : ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  int fd_;
  std::string buffer_;
};

// "<count>x <item>" for each distinct item, in order.
std::string Tally(const std::vector<std::string>& items) {
  std::map<std::string, int> counts;
  for (const auto& item : items) ++counts[item];
  std::string out;
  for (const auto& [item, n] : counts) out += std::to_string(n) + "x " + item + "\n";
  return out;
}

class HttpLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    controller_ = std::make_unique<controller::JobController>(
        &store_, &executor_, &images_, nullptr,
        controller::JobControllerOptions{testing::MakeTestDir() / "jobs"});
    ASSERT_TRUE(controller_->Start().ok());
  }
  void StartServer(ApiServerOptions options) {
    options.port = 0;
    server_ = std::make_unique<ApiServer>(ApiControllers{controller_.get(), nullptr, &operations_},
                                          options);
    auto port = server_->Bind();
    ASSERT_TRUE(port.ok()) << port.status();
    port_ = *port;
    thread_ = std::thread([this] { server_->Serve(); });
  }
  void TearDown() override {
    if (!server_) return;
    server_->Stop();
    thread_.join();
  }
  std::string CreateJob() {
    RawConnection c(port_);
    c.Send("POST", kJobs, kJob);
    json job = json::parse(c.Read().substr(4), nullptr, false);
    return job.value("name", "");
  }
  // Until `n` requests hold long-poll slots. Bounded by ctest's timeout, not by a clock here.
  void AwaitLongPolls(int n) {
    while (server_->load().long_polls < n)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::vector<std::unique_ptr<RawConnection>> Open(int n) {
    std::vector<std::unique_ptr<RawConnection>> out;
    for (int i = 0; i < n; ++i) out.push_back(std::make_unique<RawConnection>(port_));
    return out;
  }

  int port_ = 0;
  store::MemoryJobStore store_;
  executor::FakeExecutor executor_;
  controller::OperationController operations_{&store_};
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  std::unique_ptr<controller::JobController> controller_;
  std::unique_ptr<ApiServer> server_;
  std::thread thread_;
};

TEST_F(HttpLoadTest, HealthzAnswersWhile200LogStreamsWaitAnd200ConnectionsIdle) {
  ApiServerOptions options;
  options.max_log_wait_seconds = 600;  // the streams end when the job does, not before
  options.keep_alive_seconds = 600;    // idle connections stay idle for the whole test
  StartServer(options);
  const std::string job = CreateJob();
  ASSERT_FALSE(job.empty());

  auto idle = Open(200);
  for (auto& c : idle) c->Send("GET", "/healthz");
  std::vector<std::string> first;
  for (auto& c : idle) first.push_back(c->Read());  // now idle, kept alive
  auto streams = Open(200);
  for (auto& c : streams) c->Send("GET", "/v1/" + job + ":logs?waitSeconds=600");
  AwaitLongPolls(200);

  RawConnection probe(port_);
  probe.Send("GET", "/healthz");
  const std::string healthz = probe.Read();
  probe.Send("GET", "/readyz");
  const std::string readyz = probe.Read();

  ASSERT_TRUE(controller_->Cancel(job).ok());  // ends every stream
  std::vector<std::string> pages;
  for (auto& c : streams) {
    json page = json::parse(c->Read().substr(4), nullptr, false);
    pages.push_back(page.value("jobState", "?") + " done=" + page.value("done", json()).dump() +
                    " entries=" + std::to_string(page.value("entries", json::array()).size()));
  }
  std::vector<std::string> again;
  for (auto& c : idle) {
    c->Send("GET", "/healthz");
    again.push_back(c->Read());
  }
  EXPECT_EQ("healthz " + healthz + "\nreadyz " + readyz + "\nidle, first:\n" + Tally(first) +
                "streams:\n" + Tally(pages) + "idle, again:\n" + Tally(again),
            "healthz 200 {\"status\":\"SERVING\"}\n"
            "readyz 200 {\"status\":\"READY\"}\n"
            "idle, first:\n200x 200 {\"status\":\"SERVING\"}\n"
            "streams:\n200x JOB_STATE_CANCELLED done=true entries=0\n"
            "idle, again:\n200x 200 {\"status\":\"SERVING\"}\n");
}

// With every slot taken, a long-poll answers at once with what there is (the log page, the
// operation as it stands), exactly as if its wait had elapsed: never an error.
TEST_F(HttpLoadTest, LongPollsBeyondTheSlotsAnswerAtOnceWithWhatThereIs) {
  ApiServerOptions options;
  options.http_threads = 16;
  options.max_long_polls = 2;
  options.max_log_wait_seconds = 600;
  StartServer(options);
  const std::string job = CreateJob();
  const std::string logs = "/v1/" + job + ":logs?waitSeconds=600";
  auto waiting = Open(2);
  for (auto& c : waiting) c->Send("GET", logs);
  AwaitLongPolls(2);

  std::vector<std::string> at_once;
  for (int i = 0; i < 3; ++i) {
    RawConnection c(port_);
    c.Send("GET", logs);
    json page = json::parse(c.Read().substr(4), nullptr, false);
    at_once.push_back("logs " + page.value("jobState", "?") + " done=" + page["done"].dump());
  }
  auto op = operations_.Begin({"projects/p/locations/us-central1", "type.googleapis.com/x"});
  ASSERT_TRUE(op.ok()) << op.status();
  RawConnection c(port_);
  c.Send("POST", "/v1/" + (*op)["name"].get<std::string>() + ":wait", R"({"timeout":"600s"})");
  json waited = json::parse(c.Read().substr(4), nullptr, false);
  at_once.push_back("operation done=" + waited.value("done", json(false)).dump());

  ASSERT_TRUE(controller_->Cancel(job).ok());
  for (auto& w : waiting) {
    json page = json::parse(w->Read().substr(4), nullptr, false);
    at_once.push_back("waited " + page.value("jobState", "?"));
  }
  EXPECT_EQ(Tally(at_once),
            "3x logs JOB_STATE_QUEUED done=false\n1x operation done=false\n"
            "2x waited JOB_STATE_CANCELLED\n");
}

TEST_F(HttpLoadTest, OutOfRangeLimitsAreRefusedNamingTheFlag) {
  std::string errors;
  for (auto [threads, polls, keep_alive] :
       {std::tuple{0, 0, 5}, std::tuple{64, 57, 5}, std::tuple{64, -1, 5}, std::tuple{64, 8, 0}}) {
    ApiServerOptions options;
    options.port = 0;
    options.http_threads = threads;
    options.max_long_polls = polls;
    options.keep_alive_seconds = keep_alive;
    ApiServer server(ApiControllers{controller_.get(), nullptr, &operations_}, options);
    errors += server.Bind().status().ToString() + "\n";
  }
  EXPECT_EQ(errors,
            "INVALID_ARGUMENT: --http-threads 0: must be at least 1 (one thread per connection "
            "served at once; the default is 512)\n"
            "INVALID_ARGUMENT: --max-long-polls 57 with --http-threads 64: waiting requests must "
            "leave at least 8 threads to other requests; raise --http-threads or lower "
            "--max-long-polls\n"
            "INVALID_ARGUMENT: --max-long-polls -1: must be 0 (no request waits) or more\n"
            "INVALID_ARGUMENT: --keep-alive-seconds 0: must be at least 1\n");
}

}  // namespace
}  // namespace trainyard::api
