// The ResourceStore conformance suite: every implementation passes it. An implementation's test
// only instantiates it with a factory:
//   INSTANTIATE_TEST_SUITE_P(Sqlite, ResourceStoreConformanceTest,
//       ::testing::Values([](const std::filesystem::path& dir) { ... }));
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>

#include "store/resource_store.h"

namespace trainyard::store {

using ResourceStoreFactory =
    std::function<std::unique_ptr<ResourceStore>(const std::filesystem::path& dir)>;

class ResourceStoreConformanceTest : public ::testing::TestWithParam<ResourceStoreFactory> {
 protected:
  void SetUp() override;

  // A "widgets" record "projects/p/locations/l/widgets/<id>" created at unix second `created_s`.
  static ResourceRecord MakeWidget(const std::string& id, int64_t created_s, int64_t state = 1,
                                   std::map<std::string, std::string> labels = {});
  // Every page of widgets under projects/p/locations/l matching `filter`, ids joined.
  std::string ListAll(const std::string& filter, int page_size = 0);

  std::filesystem::path dir_;
  std::unique_ptr<ResourceStore> store_;
};

// The state names of the suite's widgets: WIDGET_STATE_UNSPECIFIED=0, ACTIVE=1, RETIRED=2.
const StateVocabulary& WidgetStates();

}  // namespace trainyard::store
