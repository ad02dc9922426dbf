#include "store/list_filter.h"

#include <gtest/gtest.h>

namespace trainyard::store {
namespace {

TEST(ListFilterTest, WildcardMatch) {
  EXPECT_TRUE(WildcardMatch("my_job_*", "my_job_1"));
  EXPECT_TRUE(WildcardMatch("*a*b*", "xxaxxbxx"));
  EXPECT_FALSE(WildcardMatch("my_job_*", "your_job_1"));
  EXPECT_FALSE(WildcardMatch("a?c", "abc"));  // only '*' is special
}

TEST(ListFilterTest, CompilesToParameterizedSql) {
  auto f = ListFilter::Parse(R"(state="JOB_STATE_FAILED" AND labels.team:*)");
  ASSERT_TRUE(f.ok()) << f.status();
  std::string sql;
  std::vector<ListFilter::SqlParam> params;
  f->ToSql(&sql, &params);
  EXPECT_EQ(sql + " #" + std::to_string(params.size()),
            "(state = ? AND EXISTS (SELECT 1 FROM job_labels l WHERE l.name = jobs.name AND "
            "l.key = ?)) #2");
}

TEST(ListFilterTest, ErrorNamesPositionAndField) {
  EXPECT_EQ(ListFilter::Parse("state=JOB_STATE_RUNNING AND colour=red").status().message(),
            "filter: unknown field 'colour' at position 29; filterable fields are state, "
            "display_name, create_time, update_time and labels.KEY");
}

// Found by fuzz/list_filter_fuzzer: a year before 1677 overflowed the nanosecond time point.
TEST(ListFilterTest, TimesOutsideTheTimePointRangeParse) {
  EXPECT_TRUE(
      ListFilter::Parse(R"((create_time>"1012-01-01T00:00:00Z" AND labels.env="prod"))").ok());
  EXPECT_TRUE(ListFilter::Parse(R"(update_time<"9999-12-31T23:59:59Z")").ok());
}

TEST(ListFilterTest, NestingIsBounded) {
  auto wrapped = [](int depth) {
    return std::string(depth, '(') + "state=JOB_STATE_RUNNING" + std::string(depth, ')');
  };
  EXPECT_TRUE(ListFilter::Parse(wrapped(99)).ok());
  EXPECT_NE(ListFilter::Parse(wrapped(5000)).status().message().find("nesting deeper than 100"),
            std::string::npos);
  std::string nots;
  for (int i = 0; i < 5000; ++i) nots += "NOT ";
  EXPECT_NE(ListFilter::Parse(nots + "state=JOB_STATE_RUNNING")
                .status()
                .message()
                .find("nesting deeper than 100"),
            std::string::npos);
}

}  // namespace
}  // namespace trainyard::store
