// The route conformance suite of the shared resource layer: every resource served through
// RegisterResourceRoutes passes it over real HTTP (create, get, list with paging and filters,
// delete as a stored operation polled under /v1/ and /ui/, cancel, structured 400s, hostile ids
// and parameters). A resource's test only provides a ServedResource:
//   INSTANTIATE_TEST_SUITE_P(CustomJobs, ResourceRoutesConformanceTest,
//       ::testing::Values(ServedResourceFactory{"customJobs", [] { return ...; }}),
//       ServedResourceFactory::Name);
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "api/resource_routes.h"

namespace trainyard::api {

// A running server that serves one resource (on 127.0.0.1), and how to drive that resource.
class ServedResource {
 public:
  virtual ~ServedResource() = default;
  virtual int port() const = 0;
  virtual const ResourceDescriptor& descriptor() const = 0;
  // The parent the suite creates under ("projects/p/locations/us-central1").
  virtual std::string parent() const = 0;
  // A valid create body with this display name and labels (and, for client-chosen ids, this id).
  virtual std::string ValidBody(const std::string& id, const std::string& display_name,
                                const std::map<std::string, std::string>& labels) const = 0;
  // A create body with one invalid field; *field gets its path as fieldViolations names it.
  virtual std::string InvalidBody(std::string* field) const = 0;
  // Brings the resource to an ended state (so that it may be deleted). OK once it has.
  virtual Status End(const std::string& name) = 0;
  // Whether a new resource has not ended yet (so delete must be refused until End, and cancel
  // is served).
  virtual bool StartsUnended() const = 0;
  // Whether PATCH is served.
  virtual bool Patchable() const { return false; }
  // Whether DELETE is served (AI Platform's jobs have none: it must then be 404).
  virtual bool Deletable() const { return true; }
  // An answered resource's name and display name (AI Platform's Job has neither: it is named
  // by its jobId, which then plays the display name).
  virtual std::string NameOf(const nlohmann::json& item) const { return item.value("name", ""); }
  virtual std::string DisplayNameOf(const nlohmann::json& item) const {
    return item.value("displayName", std::string("?"));
  }
  // Create is `POST {collection}{CreateVerb()}`: "" for the standard method, ":upload" for a
  // resource created by a custom method (models).
  virtual std::string CreateVerb() const { return ""; }
  // The new resource's name in a create answer: NameOf the answer, or where an operation's
  // response holds it.
  virtual std::string CreatedName(const nlohmann::json& answer) const { return NameOf(answer); }
};

struct ServedResourceFactory {
  std::string name;  // the test's parameter name
  std::function<std::unique_ptr<ServedResource>()> make;
  static std::string Name(const ::testing::TestParamInfo<ServedResourceFactory>& info) {
    return info.param.name;
  }
};

class ResourceRoutesConformanceTest : public ::testing::TestWithParam<ServedResourceFactory> {
 protected:
  void SetUp() override;

  // (HTTP status, body); status -1 when the server could not be reached.
  std::pair<int, nlohmann::json> Call(const std::string& method, const std::string& path,
                                      const std::string& body = "");
  // "/v1/projects/p/locations/l/customJobs" (the descriptor's prefix and collection).
  std::string CollectionPath() const;
  // Where a create is POSTed: CollectionPath() + the resource's CreateVerb().
  std::string CreatePath() const;
  // Creates one resource; its name, or "" (with a test failure) when the create failed.
  // Display names are letters, digits and '_' (they may have to be ids).
  std::string Create(const std::string& display_name,
                     const std::map<std::string, std::string>& labels = {});
  // The display names of a list answer, in order.
  std::string DisplayNames(const nlohmann::json& page) const;

  std::unique_ptr<ServedResource> served_;
  int next_id_ = 0;
};

}  // namespace trainyard::api
