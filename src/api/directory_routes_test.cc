#include "api/directory_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <thread>

#include "common/time.h"
#include "controller/resource_directory.h"
#include "spec/image_catalog.h"
#include "store/memory_job_store.h"
#include "testing/test_util.h"

namespace trainyard::api {
namespace {

using nlohmann::json;

const auth::TimePoint kDirectoryNow = auth::TimePoint(std::chrono::seconds(1'800'000'000));

// The routes on a real HTTP server, with tokens (`with_auth`) or without.
class DirectoryRoutesTest : public ::testing::Test {
 protected:
  void Start(bool with_auth) {
    auto dir = testing::MakeTestDir();
    tokens_ = std::move(*auth::TokenStore::Open(dir / "auth.db"));
    routes_ = std::make_unique<RouteTable>(
        server_,
        AuthOptions{with_auth ? tokens_.get() : nullptr, nullptr, [] { return kDirectoryNow; }});
    RegisterDirectoryRoutes(*routes_, &directory_, &images_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  void TearDown() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  void AddJob(const std::string& parent, const std::string& id) {
    spec::CustomJob job;
    job.name = parent + "/customJobs/" + id;
    job.create_time = FromUnixMicros(1);
    ASSERT_TRUE(store_.Create(job).ok());
  }
  std::string Token(const std::string& project, auth::Role role) {
    return tokens_->Create(project, role, kDirectoryNow, kDirectoryNow + std::chrono::hours(1))
        ->secret;
  }
  // "STATUS body" of a GET (the body compacted; "" when none).
  std::string Get(const std::string& path, const std::string& token = "") {
    httplib::Client c("127.0.0.1", port_);
    if (!token.empty()) c.set_bearer_token_auth(token);
    auto r = c.Get(path);
    if (!r) return "no response";
    json body = json::parse(r->body, nullptr, false);
    return std::to_string(r->status) + " " + (body.is_discarded() ? r->body : body.dump());
  }

  store::MemoryJobStore store_;
  controller::ResourceDirectory directory_{&store_, &store_, &store_};
  spec::ImageCatalog images_ = spec::ImageCatalog::BuiltIn();
  httplib::Server server_;
  std::unique_ptr<auth::TokenStore> tokens_;
  std::unique_ptr<RouteTable> routes_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(DirectoryRoutesTest, ProjectsAndCallerFollowTheToken) {
  Start(/*with_auth=*/true);
  AddJob("projects/alpha/locations/europe-west4", "1");
  AddJob("projects/beta/locations/us-central1", "2");
  const std::string viewer = Token("alpha", auth::Role::kViewer);
  const std::string ops = Token("*", auth::Role::kEditor);
  const std::string empty = Token("gamma", auth::Role::kAdmin);
  // The token id is random: checked for presence, then left out.
  auto drop_token_id = [](const std::string& answer) {
    const size_t space = answer.find(' ');
    json body = json::parse(answer.substr(space + 1));
    const bool has_id = body.value("tokenId", "").size() == 16;
    body.erase("tokenId");
    return answer.substr(0, space) + (has_id ? " " : " (no tokenId) ") + body.dump();
  };
  EXPECT_EQ(Get("/v1/projects") + "\n" + Get("/v1/projects", viewer) + "\n" +
                Get("/v1/projects", ops) + "\n" + Get("/v1/projects", empty) + "\n" +
                drop_token_id(Get("/v1/caller", viewer)) + "\n" +
                drop_token_id(Get("/v1/caller", ops)),
            R"(401 {"error":{"code":401,"message":"Request is missing required authentication )"
            R"(credential. Expected an `Authorization: Bearer TOKEN` header with a token from )"
            R"(`trainyard auth create-token` (see docs/security.md).","status":"UNAUTHENTICATED"}})"
            "\n"
            R"(200 {"projects":[{"locations":[{"locationId":"europe-west4","name":"projects/alpha/)"
            R"(locations/europe-west4","resourceCounts":{"customJobs":1}}],"projectId":"alpha"}]})"
            "\n"
            R"(200 {"projects":[{"locations":[{"locationId":"europe-west4","name":"projects/alpha/)"
            R"(locations/europe-west4","resourceCounts":{"customJobs":1}}],"projectId":"alpha"},)"
            R"({"locations":[{"locationId":"us-central1","name":"projects/beta/locations/)"
            R"(us-central1","resourceCounts":{"customJobs":1}}],"projectId":"beta"}]})"
            "\n"
            R"(200 {"projects":[{"locations":[],"projectId":"gamma"}]})"
            "\n"
            R"(200 {"access":{"admin":false,"read":true,"write":false},"authentication":true,)"
            R"("project":"alpha","role":"viewer"})"
            "\n"
            R"(200 {"access":{"admin":false,"read":true,"write":true},"authentication":true,)"
            R"("project":"*","role":"editor"})");
}

TEST_F(DirectoryRoutesTest, WithoutAuthEveryCallerIsAnAdminOfEveryProject) {
  Start(/*with_auth=*/false);
  AddJob("projects/local/locations/us-central1", "1");
  EXPECT_EQ(Get("/v1/caller") + "\n" + Get("/v1/projects"),
            R"(200 {"access":{"admin":true,"read":true,"write":true},"authentication":false,)"
            R"("project":"*","role":"admin"})"
            "\n"
            R"(200 {"projects":[{"locations":[{"locationId":"us-central1","name":"projects/local/)"
            R"(locations/us-central1","resourceCounts":{"customJobs":1}}],"projectId":"local"}]})");
}

TEST_F(DirectoryRoutesTest, ContainerImagesAreWhatTheCatalogRuns) {
  Start(/*with_auth=*/false);
  httplib::Client c("127.0.0.1", port_);
  auto r = c.Get("/v1/containerImages");
  ASSERT_TRUE(r && r->status == 200);
  std::string got;
  const json body = json::parse(r->body);
  for (const json& i : body["containerImages"]) {
    got += i["use"].get<std::string>() + " " + i["imageUri"].get<std::string>() + "\n";
    // Every suggestion runs here: the catalog resolves it (or serves it natively).
    if (i["use"] == "TRAINING") EXPECT_NE(images_.Find(i["imageUri"].get<std::string>()), nullptr);
  }
  EXPECT_EQ(got,
            "TRAINING trainyard/bert-sentiment:latest\n"
            "SERVING trainyard/bert-serve:latest\n"
            "BATCH_PREDICTION trainyard/bert-batch-predict:latest\n"
            "TRAINING us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest\n"
            "SERVING us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest\n");
  EXPECT_EQ(c.Get("/v1/containerImages?x=1")->status, 400);
}

TEST_F(DirectoryRoutesTest, MachineTypesListSizesBundledGpusAndPrices) {
  Start(/*with_auth=*/false);
  httplib::Client c("127.0.0.1", port_);
  auto r = c.Get("/v1/machineTypes");
  ASSERT_TRUE(r && r->status == 200);
  json body = json::parse(r->body);
  std::string got;
  for (const json& m : body["machineTypes"]) {
    const std::string name = m["name"];
    if (name != "n1-standard-4" && name != "a2-highgpu-1g") continue;
    got += name + " " + m["family"].get<std::string>() + " " + m["vcpus"].dump() + " vCPU " +
           m["memoryGib"].dump() + " GiB $" + m["usdPerHour"].dump() + " $" +
           m["usdPerHourWithAccelerators"].dump() + " " +
           m.value("bundledAccelerator", json()).dump() + "\n";
  }
  bool has_t4 = false;
  for (const json& a : body["acceleratorTypes"]) has_t4 |= a["name"] == "NVIDIA_TESLA_T4";
  EXPECT_EQ(got + (has_t4 ? "T4 listed" : "no T4"),
            "n1-standard-4 n1-standard 4 vCPU 15.0 GiB $0.24 $0.24 null\n"
            "a2-highgpu-1g a2-highgpu 12 vCPU 85.0 GiB $0.8711 $4.2452 "
            R"({"acceleratorCount":1,"acceleratorType":"NVIDIA_TESLA_A100"})"
            "\nT4 listed");
}

}  // namespace
}  // namespace trainyard::api
