#include "executor/replica_status_file.h"

#include <gtest/gtest.h>

#include "common/file_util.h"
#include "testing/test_util.h"

namespace trainyard::executor {
namespace {

namespace fs = std::filesystem;

TEST(ReplicaStatusFileTest, WhatTheWrapperWritesIsReadBackWithItsEndTime) {
  const fs::path path = testing::MakeTestDir() / "attempt-0.status";
  const std::string absent = ReadReplicaStatusFile(path).status().ToString();
  ASSERT_TRUE(WriteReplicaStatusFile(path, 143).ok());
  auto exit = ReadReplicaStatusFile(path);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(absent.substr(0, 10) + " " + std::to_string(exit->exit_code) + " " +
                std::to_string(exit->end_time.size() > 10),
            "NOT_FOUND: 143 1");
}

TEST(ReplicaStatusFileTest, AnOlderFileWithoutEndTimeReadsAndAJunkOneIsDataLoss) {
  const fs::path dir = testing::MakeTestDir();
  ASSERT_TRUE(WriteFileAtomic(dir / "old", "{\"exit_code\": 3}\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "junk", "{\"exit_code\": \"x\"").ok());
  auto old = ReadReplicaStatusFile(dir / "old");
  ASSERT_TRUE(old.ok()) << old.status();
  const Status junk = ReadReplicaStatusFile(dir / "junk").status();
  EXPECT_EQ(std::to_string(old->exit_code) + "[" + old->end_time + "] " +
                junk.ToString().substr(0, junk.ToString().find(" /")),
            "3[] DATA_LOSS: corrupt replica status file");
}

}  // namespace
}  // namespace trainyard::executor
