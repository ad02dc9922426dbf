#include "store/resource_store_conformance.h"

#include "common/time.h"
#include "store/list_conformance.h"
#include "testing/test_util.h"

namespace trainyard::store {

using nlohmann::json;

const StateVocabulary& WidgetStates() {
  static const StateVocabulary kStates{"widget state", "ACTIVE",
                                       [](std::string_view name) -> std::optional<int64_t> {
                                         if (name == "WIDGET_STATE_UNSPECIFIED") return 0;
                                         if (name == "ACTIVE") return 1;
                                         if (name == "RETIRED") return 2;
                                         return std::nullopt;
                                       }};
  return kStates;
}

void ResourceStoreConformanceTest::SetUp() {
  dir_ = testing::MakeTestDir();
  store_ = GetParam()(dir_);
  ASSERT_NE(store_, nullptr);
}

ResourceRecord ResourceStoreConformanceTest::MakeWidget(const std::string& id, int64_t created_s,
                                                        int64_t state,
                                                        std::map<std::string, std::string> labels) {
  ResourceRecord r;
  r.parent = "projects/p/locations/l";
  r.name = r.parent + "/widgets/" + id;
  r.state = state;
  r.display_name = "widget " + id;
  r.create_time = FromUnixMicros(created_s * 1000000);
  r.labels = std::move(labels);
  r.body = {{"name", r.name}, {"size", created_s}};
  r.runtime = {{"cursor", 7}};
  return r;
}

std::string ResourceStoreConformanceTest::ListAll(const std::string& filter, int page_size) {
  return conformance::ListAllIds(filter, page_size, [this](const ListQuery& q) {
    return store_->ListResources("widgets", q, WidgetStates());
  });
}

namespace {

std::string Show(const StatusOr<ResourceRecord>& r) {
  if (!r.ok()) return r.status().ToString();
  return r->name + " state=" + std::to_string(r->state) + " " + r->display_name + " " +
         FormatTimestamp(*r->create_time) + " " + FormatTimestamp(*r->update_time) +
         " labels=" + json(r->labels).dump() + " body=" + r->body.dump() +
         " runtime=" + r->runtime.dump();
}

TEST_P(ResourceStoreConformanceTest, CreateThenGetReturnsTheRecordWithUpdateTimeDefaulted) {
  ASSERT_TRUE(store_->CreateResource("widgets", MakeWidget("1", 100, 1, {{"a", "b"}})).ok());
  EXPECT_EQ(Show(store_->GetResource("widgets", "projects/p/locations/l/widgets/1")),
            "projects/p/locations/l/widgets/1 state=1 widget 1 1970-01-01T00:01:40.000000Z "
            "1970-01-01T00:01:40.000000Z labels={\"a\":\"b\"} "
            "body={\"name\":\"projects/p/locations/l/widgets/1\",\"size\":100} "
            "runtime={\"cursor\":7}");
}

TEST_P(ResourceStoreConformanceTest, ADuplicateNameIsAlreadyExistsAndAnotherKindDoesNotSeeIt) {
  ASSERT_TRUE(store_->CreateResource("widgets", MakeWidget("1", 100)).ok());
  EXPECT_EQ(store_->CreateResource("widgets", MakeWidget("1", 200)).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->CreateResource("gadgets", MakeWidget("1", 200)).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->GetResource("gadgets", "projects/p/locations/l/widgets/1").status().code(),
            StatusCode::kNotFound);
}

TEST_P(ResourceStoreConformanceTest, MalformedRecordsAreRefused) {
  ResourceRecord no_time = MakeWidget("1", 100);
  no_time.create_time.reset();
  ResourceRecord outside = MakeWidget("2", 100);
  outside.parent = "projects/q/locations/l";
  std::string codes;
  for (const Status& s : {store_->CreateResource("widgets", no_time),
                          store_->CreateResource("bad kind", MakeWidget("3", 1)),
                          store_->CreateResource("widgets", outside)}) {
    codes += std::string(StatusCodeName(s.code())) + " ";
  }
  EXPECT_EQ(codes, "INVALID_ARGUMENT INVALID_ARGUMENT INVALID_ARGUMENT ");
}

TEST_P(ResourceStoreConformanceTest, MutateWritesAtomicallyAndAFailedMutationWritesNothing) {
  ASSERT_TRUE(store_->CreateResource("widgets", MakeWidget("1", 100, 1, {{"a", "b"}})).ok());
  const std::string name = "projects/p/locations/l/widgets/1";
  auto failed = store_->MutateResource("widgets", name, [](ResourceRecord& r) {
    r.state = 2;
    return FailedPreconditionError("no");
  });
  EXPECT_EQ(failed.status().code(), StatusCode::kFailedPrecondition);
  auto renamed = store_->MutateResource("widgets", name, [](ResourceRecord& r) {
    r.parent = "projects/x";
    return Status::Ok();
  });
  EXPECT_EQ(renamed.status().code(), StatusCode::kInternal);
  auto done = store_->MutateResource("widgets", name, [](ResourceRecord& r) {
    r.state = 2;
    r.labels = {{"c", "d"}};
    r.update_time = FromUnixMicros(300'000'000);
    r.body["size"] = 5;
    r.runtime = {{"cursor", 8}};
    return Status::Ok();
  });
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(Show(store_->GetResource("widgets", name)),
            name +
                " state=2 widget 1 1970-01-01T00:01:40.000000Z 1970-01-01T00:05:00.000000Z "
                "labels={\"c\":\"d\"} "
                "body={\"name\":\"" +
                name + "\",\"size\":5} runtime={\"cursor\":8}");
  EXPECT_EQ(ListAll("labels.a:*") + "|" + ListAll("labels.c=d"), "|1");
}

TEST_P(ResourceStoreConformanceTest, DeleteRemovesTheRecordAndItsLabels) {
  ASSERT_TRUE(store_->CreateResource("widgets", MakeWidget("1", 100, 1, {{"a", "b"}})).ok());
  const std::string name = "projects/p/locations/l/widgets/1";
  EXPECT_EQ(store_->DeleteResource("gadgets", name).code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->DeleteResource("widgets", name).ok());
  EXPECT_EQ(store_->DeleteResource("widgets", name).code(), StatusCode::kNotFound);
  ASSERT_TRUE(store_->CreateResource("widgets", MakeWidget("1", 100)).ok());
  EXPECT_EQ(ListAll("labels.a:*"), "");
}

TEST_P(ResourceStoreConformanceTest, ListIsNewestFirstPagedAndFilteredWithTheKindsStateNames) {
  for (int i = 1; i <= 7; ++i) {
    ASSERT_TRUE(store_
                    ->CreateResource("widgets", MakeWidget(std::to_string(i), i * 10, i % 2 ? 1 : 2,
                                                           {{"n", "x"}}))
                    .ok());
  }
  ResourceRecord elsewhere = MakeWidget("8", 80);
  elsewhere.parent = "projects/p/locations/m";
  elsewhere.name = elsewhere.parent + "/widgets/8";
  ASSERT_TRUE(store_->CreateResource("widgets", elsewhere).ok());
  ResourceRecord gadget = MakeWidget("9", 90);
  gadget.name = gadget.parent + "/gadgets/9";
  ASSERT_TRUE(store_->CreateResource("gadgets", gadget).ok());
  EXPECT_EQ(ListAll("", 3), "7 6 5 4 3 2 1");
  EXPECT_EQ(ListAll("state=RETIRED", 2), "6 4 2");
  EXPECT_EQ(ListAll("state!=RETIRED AND create_time>\"1970-01-01T00:00:20Z\""), "7 5 3");
  auto bad = store_->ListResources("widgets", {"projects/p/locations/l", "state=JOB_STATE_RUNNING"},
                                   WidgetStates());
  EXPECT_EQ(bad.status().message(),
            "filter: 'JOB_STATE_RUNNING' (position 7) is not a widget state; use e.g. ACTIVE");
}

TEST_P(ResourceStoreConformanceTest, APageTokenIsBoundToItsKindParentAndFilter) {
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(store_->CreateResource("widgets", MakeWidget(std::to_string(i), i)).ok());
  }
  auto first = store_->ListResources("widgets", {"projects/p/locations/l", "", 1}, WidgetStates());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_FALSE(first->next_page_token.empty());
  ListQuery q{"projects/p/locations/l", "", 1, first->next_page_token};
  EXPECT_EQ(store_->ListResources("gadgets", q, WidgetStates()).status().code(),
            StatusCode::kInvalidArgument);
  q.filter = "state=ACTIVE";
  EXPECT_EQ(store_->ListResources("widgets", q, WidgetStates()).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_P(ResourceStoreConformanceTest, ListAllIsOldestFirstAcrossParentsOfOneKind) {
  ResourceRecord b = MakeWidget("b", 20);
  b.parent = "projects/q";
  b.name = "projects/q/widgets/b";
  ASSERT_TRUE(store_->CreateResource("widgets", b).ok());
  ASSERT_TRUE(store_->CreateResource("widgets", MakeWidget("a", 10)).ok());
  ResourceRecord gadget = MakeWidget("g", 5);
  gadget.name = gadget.parent + "/gadgets/g";
  ASSERT_TRUE(store_->CreateResource("gadgets", gadget).ok());
  auto all = store_->ListAllResources("widgets");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(conformance::JoinIds(*all), "a b");
}

TEST_P(ResourceStoreConformanceTest, CountByParentCountsOneKindPerParent) {
  ResourceRecord b = MakeWidget("b", 20);
  b.parent = "projects/q";
  b.name = "projects/q/widgets/b";
  ASSERT_TRUE(store_->CreateResource("widgets", b).ok());
  ASSERT_TRUE(store_->CreateResource("widgets", MakeWidget("a", 10)).ok());
  ASSERT_TRUE(store_->CreateResource("widgets", MakeWidget("c", 30)).ok());
  ResourceRecord gadget = MakeWidget("g", 5);
  gadget.name = gadget.parent + "/gadgets/g";
  ASSERT_TRUE(store_->CreateResource("gadgets", gadget).ok());
  auto counts = store_->CountResourcesByParent("widgets");
  ASSERT_TRUE(counts.ok()) << counts.status();
  std::string got;
  for (const ParentCount& c : *counts) got += c.parent + "=" + std::to_string(c.count) + " ";
  EXPECT_EQ(got, "projects/p/locations/l=2 projects/q=1 ");
}

TEST_P(ResourceStoreConformanceTest, CountByStateCountsOneKindOverAllParents) {
  ResourceRecord b = MakeWidget("b", 20, 2);
  b.parent = "projects/q";
  b.name = "projects/q/widgets/b";
  ASSERT_TRUE(store_->CreateResource("widgets", b).ok());
  ASSERT_TRUE(store_->CreateResource("widgets", MakeWidget("a", 10, 1)).ok());
  ASSERT_TRUE(store_->CreateResource("widgets", MakeWidget("c", 30, 2)).ok());
  ResourceRecord gadget = MakeWidget("g", 5, 1);
  gadget.name = gadget.parent + "/gadgets/g";
  ASSERT_TRUE(store_->CreateResource("gadgets", gadget).ok());
  auto counts = store_->CountResourcesByState("widgets");
  ASSERT_TRUE(counts.ok()) << counts.status();
  std::string got;
  for (const StateCount& c : *counts) {
    got += std::to_string(c.state) + "=" + std::to_string(c.count) + " ";
  }
  EXPECT_EQ(got, "1=1 2=2 ");
}

// A family: parts (kind "parts") under a widget. The family's calls write the difference only,
// atomically: a failing mutate or a taken child name leaves every row as it was.
ResourceRecord MakePart(const std::string& widget, const std::string& id, int64_t created_s) {
  ResourceRecord r;
  r.parent = widget;
  r.name = widget + "/parts/" + id;
  r.create_time = FromUnixMicros(created_s * 1000000);
  r.labels = {{"part", id}};
  r.body = {{"id", id}};
  return r;
}

// "<record's runtime> | part ids and bodies, oldest first", read through a family mutate.
std::string ShowFamily(ResourceStore& store, const std::string& name) {
  std::string out;
  auto f = store.MutateResourceFamily("widgets", name, "parts", [&](ResourceFamily& f) {
    out = f.record.runtime.dump() + " |";
    for (const auto& c : f.children) out += " " + c.Id() + "=" + c.body.dump();
    return Status::Ok();
  });
  return f.ok() ? out : f.status().ToString();
}

TEST_P(ResourceStoreConformanceTest, AFamilyChangesTogetherAndOnlyWhatChanged) {
  const ResourceRecord w = MakeWidget("1", 100);
  ASSERT_TRUE(store_
                  ->CreateResourceFamily("widgets", w, "parts",
                                         {MakePart(w.name, "a", 101), MakePart(w.name, "b", 102)})
                  .ok());
  const std::string created = ShowFamily(*store_, w.name);
  auto changed = store_->MutateResourceFamily("widgets", w.name, "parts", [&](ResourceFamily& f) {
    f.record.runtime = {{"next", 3}};
    f.children[1].body["id"] = "B";
    f.children.erase(f.children.begin());
    f.children.push_back(MakePart(w.name, "c", 103));
    return Status::Ok();
  });
  ASSERT_TRUE(changed.ok()) << changed.status();
  auto failed = store_->MutateResourceFamily("widgets", w.name, "parts", [&](ResourceFamily& f) {
    f.children.clear();
    return InvalidArgumentError("no");
  });
  ResourceRecord squatter = MakePart(w.name, "x", 104);  // a widget, not a part
  ASSERT_TRUE(store_->CreateResource("widgets", squatter).ok());
  auto taken = store_->MutateResourceFamily("widgets", w.name, "parts", [&](ResourceFamily& f) {
    f.record.runtime = {{"next", 99}};
    f.children.push_back(MakePart(w.name, "x", 104));
    return Status::Ok();
  });
  auto by_label = store_->ListResources("parts", {w.name, "labels.part=c", 0, ""}, WidgetStates());
  ASSERT_TRUE(by_label.ok()) << by_label.status();
  const std::string before_erase = ShowFamily(*store_, w.name);
  auto erased = store_->MutateResourceFamily("widgets", w.name, "parts", [](ResourceFamily& f) {
    f.erase = true;
    return Status::Ok();
  });
  EXPECT_EQ(created + " || " + failed.status().ToString() + " | " +
                std::string(StatusCodeName(taken.status().code())) + " || " + before_erase + " | " +
                by_label->jobs.at(0).Id() + " || " + erased.status().ToString() + " " +
                store_->GetResource("parts", w.name + "/parts/c").status().ToString() + " " +
                std::to_string(store_->ListAllResources("widgets")->size()),
            R"({"cursor":7} | a={"id":"a"} b={"id":"b"} || INVALID_ARGUMENT: no | )"
            R"(ALREADY_EXISTS || {"next":3} | b={"id":"B"} c={"id":"c"} | c || OK NOT_FOUND: )"
            "parts " +
                w.name + "/parts/c not found 1");
}

}  // namespace
}  // namespace trainyard::store
