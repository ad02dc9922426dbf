#include "executor/package_index.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace trainyard::executor {
namespace {

namespace fs = std::filesystem;
using Paths = std::vector<fs::path>;

class PackageIndexTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = testing::MakeTestDir(); }
  void Write(const std::string& path, const std::string& text) {
    testing::WriteFileOrDie(root_ / fs::path(path).relative_path(), text);
  }
  fs::path root_;
};

TEST_F(PackageIndexTest, HandsAContainerTheHostsPipFilesAndWhatTheyName) {
  Write("/etc/pip.conf",
        "[global]\n"
        "index_url = https://mirror.example/simple\n"
        "cert = /etc/ssl/corp.pem\n"
        "find-links =\n"
        "    /srv/wheels\n"
        "    file:///srv/more-wheels\n"
        "    https://example.invalid/wheels\n"
        "; client-cert = /etc/commented-out.pem\n"
        "[install]\n"
        "client-cert: /etc/ssl/missing.pem\n");
  Write("/etc/ssl/corp.pem", "pem");
  Write("/srv/wheels/a-1-py3-none-any.whl", "");
  Write("/srv/more-wheels/b-1-py3-none-any.whl", "");
  Write("/home/u/.config/pip/pip.conf", "[global]\nextra-index-url = https://x.example/simple\n");
  Write("/opt/ca.pem", "pem");
  const EnvMap env = {{"HOME", "/home/u"},
                      {"PATH", "/usr/bin"},
                      {"PIP_INDEX_URL", "https://i"},
                      {"PIP_CACHE_DIR", "/root/.cache/pip"},
                      {"PIP_CONSTRAINT", "/c.txt"},
                      {"https_proxy", "http://proxy:3128"},
                      {"NO_PROXY", "localhost"},
                      {"REQUESTS_CA_BUNDLE", "/opt/ca.pem"}};
  PackageIndexAccess access = HostPackageIndexAccess(env, root_);
  EXPECT_EQ(access.read_only,
            (Paths{"/etc/pip.conf", "/etc/ssl/corp.pem", "/srv/wheels", "/srv/more-wheels",
                   "/home/u/.config/pip/pip.conf", "/opt/ca.pem"}));
  EXPECT_EQ(access.env, (EnvMap{{"NO_PROXY", "localhost"},
                                {"PIP_CONFIG_FILE", "/home/u/.config/pip/pip.conf"},
                                {"PIP_INDEX_URL", "https://i"},
                                {"REQUESTS_CA_BUNDLE", "/opt/ca.pem"},
                                {"https_proxy", "http://proxy:3128"}}));
}

TEST_F(PackageIndexTest, ThePipConfigFileVariableWinsOverTheUsersFileAndNothingIsThereWithout) {
  EXPECT_TRUE(HostPackageIndexAccess({{"HOME", "/home/u"}}, root_).read_only.empty());
  Write("/home/u/.pip/pip.conf", "[global]\nno-index = true\n");
  Write("/cfg/pip.ini", "[global]\nfind-links = /cfg/wheels\n");
  Write("/cfg/wheels/w.whl", "");
  auto legacy = HostPackageIndexAccess({{"HOME", "/home/u"}}, root_);
  EXPECT_EQ(legacy.read_only, (Paths{"/home/u/.pip/pip.conf"}));
  EXPECT_EQ(legacy.env.at("PIP_CONFIG_FILE"), "/home/u/.pip/pip.conf");
  auto named = HostPackageIndexAccess(
      {{"HOME", "/home/u"}, {"PIP_CONFIG_FILE", "/cfg/pip.ini"}, {"PIP_FIND_LINKS", "/gone"}},
      root_);
  EXPECT_EQ(named.read_only, (Paths{"/cfg/pip.ini", "/cfg/wheels"}));
  EXPECT_EQ(named.env, (EnvMap{{"PIP_CONFIG_FILE", "/cfg/pip.ini"}, {"PIP_FIND_LINKS", "/gone"}}));
}

TEST_F(PackageIndexTest, OneCachePerProjectMadeForTheReplica) {
  auto a = ProjectPipCache(root_ / "pip-cache", "projects/team-a/locations/l/customJobs/1", {});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, root_ / "pip-cache" / "team-a");
  EXPECT_TRUE(fs::is_directory(*a));
  auto odd = ProjectPipCache(root_ / "pip-cache", "projects/../x/jobs/1", {});
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ(*odd, root_ / "pip-cache" / "__");
  auto none = ProjectPipCache(root_ / "pip-cache", "7", {});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(*none, root_ / "pip-cache" / "default");
  testing::WriteFileOrDie(root_ / "blocked", "a file");
  EXPECT_FALSE(ProjectPipCache(root_ / "blocked", "projects/p/jobs/1", {}).ok());
}

}  // namespace
}  // namespace trainyard::executor
