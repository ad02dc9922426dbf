// Image references and how Trainyard resolves a Vertex image URI to an image it can pull.
//
// A job names its image exactly as on Vertex (`containerSpec.imageUri`,
// `pythonPackageSpec.executorImageUri`): `eu.gcr.io/my-project/pt_bert_sentiment:dev`,
// `europe-docker.pkg.dev/my-project/my-repo/trainer@sha256:...`,
// `us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.1-13.py310:latest`. Those registries are not
// reachable from a self-hosted machine, so a rewrite table maps them to the user's own registry
// (see docs/containers.md):
//
//   1. ParseImageReference() checks the Docker reference grammar
//      ([DOMAIN/]PATH[:TAG][@ALGO:HEX], lowercase path components, tag <= 128 characters);
//   2. it is fully qualified (QualifiedReference: `busybox` is docker.io/library/busybox:latest),
//      so podman never has to guess a registry for a short name;
//   3. the first rewrite rule whose pattern matches the whole qualified reference replaces it,
//      and the result is parsed and qualified again.
//
// Rule syntax, one per line in a rewrite file (`#` starts a comment):
//
//   PATTERN   REPLACEMENT
//   eu.gcr.io/*/...     REGISTRY/...
//
// In a PATTERN `*` matches any run of characters other than `/` (so it stays inside one domain or
// path component) and a trailing `/...` matches the rest of the reference, tag and digest
// included. In a REPLACEMENT `REGISTRY` is the configured registry (`127.0.0.1:5000`) and `...` is
// what the pattern's `...` matched.
//
// Thread-safety: everything here is immutable after construction; safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::container {

struct ImageReference {
  std::string domain;  // "eu.gcr.io", "127.0.0.1:5000", "localhost"; empty when none was written
  std::string path;    // "my-project/pt_bert_sentiment" (lowercase components)
  std::string tag;     // "dev"; empty when none was written
  std::string digest;  // "sha256:<64 hex>"; empty when none was written

  // The reference as written: [domain/]path[:tag][@digest].
  std::string ToString() const;
};

// Parses a Docker/OCI image reference. INVALID_ARGUMENT names `field` and says what is wrong and
// what a valid reference looks like (empty text, upper case in the path, a bad tag or digest, a
// name over 255 characters, whitespace).
StatusOr<ImageReference> ParseImageReference(std::string_view text,
                                             std::string_view field = "containerSpec.imageUri");

// The reference as podman should pull it, with Docker's defaults made explicit: no domain means
// docker.io (and a one-component path gets "library/"), no tag and no digest means ":latest".
std::string QualifiedReference(const ImageReference& ref);

struct ImageRewriteRule {
  std::string pattern;
  std::string replacement;
};

// The rules Trainyard ships with (docs/containers.md lists them): Vertex's prebuilt PyTorch
// training images map to kLocalPytorchImage in the registry, then any image on Container Registry
// (gcr.io, *.gcr.io) or Artifact Registry (*-docker.pkg.dev) maps to the same name in the
// registry, dropping the cloud project (and the Artifact Registry repository); Trainyard's own
// images (trainyard/NAME, i.e. docker.io/trainyard/NAME) come from the registry too.
std::vector<ImageRewriteRule> DefaultImageRewriteRules();

// The image Vertex's prebuilt PyTorch names resolve to (scripts/build-images.sh builds it).
inline constexpr std::string_view kLocalPytorchImage = "trainyard/pytorch:latest";

// Parses a rewrite file (syntax above). `source` names the file in errors. INVALID_ARGUMENT for
// a line without exactly two fields, a pattern with `...` anywhere but at its end after `/`, or a
// replacement using `...` when its pattern has none.
StatusOr<std::vector<ImageRewriteRule>> ParseImageRewriteRules(std::string_view text,
                                                               std::string_view source);

struct ResolvedImage {
  std::string requested;  // the URI as the job spec gave it
  std::string image;      // fully qualified reference to pull and run
  std::string rule;       // "PATTERN -> REPLACEMENT" that rewrote it; empty when none matched
};

class ImageResolver {
 public:
  // `registry` ("127.0.0.1:5000", "registry.example.com/team") replaces REGISTRY; may be empty
  // when no registry is configured.
  ImageResolver(std::vector<ImageRewriteRule> rules, std::string registry);

  // Parse -> first matching rule -> parse again -> qualify. INVALID_ARGUMENT naming `field` for a
  // malformed reference (also when a rule produces one); FAILED_PRECONDITION when the matching
  // rule needs REGISTRY and none is configured (the message says how to configure one).
  StatusOr<ResolvedImage> Resolve(std::string_view image_uri,
                                  std::string_view field = "containerSpec.imageUri") const;

  const std::vector<ImageRewriteRule>& rules() const { return rules_; }
  const std::string& registry() const { return registry_; }

 private:
  std::vector<ImageRewriteRule> rules_;
  std::string registry_;
};

}  // namespace trainyard::container
