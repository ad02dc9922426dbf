#include "controller/replica_users.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace trainyard::controller {
namespace {

// A host with root, nobody, alice (1000, also in group 27) and bob (1001).
StatusOr<executor::RunAs> FakeLookup(const std::string& user) {
  if (user == "root") return executor::RunAs{"root", 0, 0, {}, "/root", std::nullopt};
  if (user == "nobody")
    return executor::RunAs{"nobody", 65534, 65534, {}, "/nonexistent", std::nullopt};
  if (user == "alice")
    return executor::RunAs{"alice", 1000, 1000, {27}, "/home/alice", std::nullopt};
  if (user == "bob") return executor::RunAs{"bob", 1001, 1001, {}, "/home/bob", std::nullopt};
  return NotFoundError("no Unix user '" + user + "' on this host");
}

class ReplicaUsersTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::MakeTestDir(); }

  StatusOr<ReplicaUsers> Load(const std::string& table, uid_t server_uid = 0,
                              bool allow_root = false) {
    ReplicaUsersOptions o;
    if (!table.empty()) {
      o.table_file = dir_ / "accounts.json";
      testing::WriteFileOrDie(o.table_file, table);
    }
    o.allow_root = allow_root;
    o.server_uid = server_uid;
    o.server_user = server_uid == 0 ? "root" : server_uid == 1000 ? "alice" : "bob";
    o.lookup = FakeLookup;
    o.shared_group = shared_group_;
    return ReplicaUsers::Load(o);
  }

  // "alice" / "server" (nullopt) / the error message.
  static std::string Who(const ReplicaUsers& users, const std::string& project,
                         const std::string& account) {
    auto r = users.Resolve(project, account);
    if (!r.ok()) return r.status().message();
    return r->has_value() ? (*r)->user : "server";
  }

  std::filesystem::path dir_;
  std::optional<uint32_t> shared_group_;
};

constexpr const char* kTable = R"({
  "defaultUser": "bob",
  "projects": {
    "team-a": {"defaultUser": "alice",
               "serviceAccounts": {"trainer@team-a.iam.gserviceaccount.com": "alice",
                                   "etl@team-a.iam.gserviceaccount.com": "bob"}},
    "team-b": {"serviceAccounts": {"trainer@team-b.iam.gserviceaccount.com": "bob"}}
  }
})";

TEST_F(ReplicaUsersTest, ARootServerWithoutATableRunsEveryReplicaAsNobody) {
  auto users = Load("");
  ASSERT_TRUE(users.ok()) << users.status();
  EXPECT_EQ(Who(*users, "p", ""), "nobody");
  // The article's job.sh names a service account: without a table it runs as the default user.
  EXPECT_EQ(Who(*users, "p", "sa@p.iam.gserviceaccount.com"), "nobody");
}

TEST_F(ReplicaUsersTest, TheTableMapsAccountsPerProjectWithDefaults) {
  auto users = Load(kTable);
  ASSERT_TRUE(users.ok()) << users.status();
  EXPECT_EQ(Who(*users, "team-a", "trainer@team-a.iam.gserviceaccount.com"), "alice");
  EXPECT_EQ(Who(*users, "team-a", "etl@team-a.iam.gserviceaccount.com"), "bob");
  EXPECT_EQ(Who(*users, "team-a", ""), "alice");  // the project's default
  EXPECT_EQ(Who(*users, "team-b", ""), "bob");    // the table's default
  EXPECT_EQ(Who(*users, "other", ""), "bob");
  // An account of another project is not this project's.
  const std::string refused = Who(*users, "team-b", "trainer@team-a.iam.gserviceaccount.com");
  EXPECT_NE(refused.find("projects.team-b.serviceAccounts in "), std::string::npos) << refused;
  auto alice = users->Resolve("team-a", "");
  ASSERT_TRUE(alice.ok() && alice->has_value());
  EXPECT_EQ((*alice)->uid, 1000u);
  EXPECT_EQ((*alice)->groups, std::vector<uint32_t>{27});
  EXPECT_EQ(users->OtherIdentities().size(), 2u);  // alice and bob
}

TEST_F(ReplicaUsersTest, RootIsOnlyAllowedWithTheFlag) {
  auto refused = Load(R"({"projects": {"p": {"defaultUser": "root"}}})");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("projects.p.defaultUser: 'root' is uid 0"),
            std::string::npos)
      << refused.status();
  EXPECT_NE(refused.status().message().find("--allow-root-replicas"), std::string::npos);
  auto allowed = Load("", 0, /*allow_root=*/true);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_EQ(Who(*allowed, "p", ""), "server");  // root itself: nothing to switch
  EXPECT_TRUE(allowed->OtherIdentities().empty());
}

TEST_F(ReplicaUsersTest, ANonRootServerRunsReplicasAsItself) {
  auto users = Load("", 1000);
  ASSERT_TRUE(users.ok()) << users.status();
  EXPECT_EQ(Who(*users, "p", ""), "server");
  EXPECT_EQ(Who(*users, "p", "sa@p.iam.gserviceaccount.com"), "server");  // single-user mode
  auto other = Load(R"({"defaultUser": "bob"})", 1000);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("cannot start replicas as 'bob'"), std::string::npos)
      << other.status();
}

TEST_F(ReplicaUsersTest, BadTablesNameTheEntry) {
  struct Case {
    std::string table;
    std::string want;
  } cases[] = {
      {R"({"defaultUser": "carol"})", "defaultUser: no Unix user 'carol'"},
      {R"({"defualtUser": "bob"})", "unknown key 'defualtUser'"},
      {R"({"projects": {"p": {"serviceAccounts": {"a@b": 7}}}})",
       "projects.p.serviceAccounts[\"a@b\"]: expected a Unix user name"},
      {R"({"projects": []})", "projects: expected a JSON object"},
      {R"({"projects": {"p": {"users": {}}}})", "projects.p: unknown key 'users'"},
      {"{", "accounts.json"},
      {std::string(300, '['), "accounts.json"},
  };
  for (const auto& c : cases) {
    auto users = Load(c.table);
    ASSERT_FALSE(users.ok()) << c.table;
    EXPECT_EQ(users.status().code(), StatusCode::kInvalidArgument) << users.status();
    EXPECT_NE(users.status().message().find(c.want), std::string::npos)
        << c.table << " -> " << users.status();
  }
}

TEST_F(ReplicaUsersTest, TheBucketGroupIsAddedToEveryReplicaUser) {
  shared_group_ = 995;
  auto users = Load(kTable);
  ASSERT_TRUE(users.ok()) << users.status();
  auto alice = users->Resolve("team-a", "");
  ASSERT_TRUE(alice.ok() && alice->has_value());
  EXPECT_EQ((*alice)->groups, (std::vector<uint32_t>{27, 995}));
  EXPECT_EQ((*alice)->bucket_group.value_or(0), 995u);  // their output dirs get it
}

}  // namespace
}  // namespace trainyard::controller
