// ImageCatalog: what a container image URI means on a host without containers.
//
// Jobs name images as on Vertex (containerSpec.imageUri, pythonPackageSpec.executorImageUri); the
// catalog maps each to the local command that plays the image's ENTRYPOINT. Built-in entries:
//   trainyard/bert-sentiment[:TAG]                 -> trainyard-bert train
//   trainyard/bert-serve[:TAG]                     -> trainyard-bert serve (endpoints' native
//                                                     runtime: controller/endpoint_controller.h)
//   trainyard/bert-batch-predict[:TAG]             -> trainyard-bert batch-predict (batch
//                                                     prediction: batch_prediction_controller.h)
//   *-docker.pkg.dev/vertex-ai/training/*          -> python3   (Vertex prebuilt training images)
//   gcr.io/cloud-aiplatform/training/*             -> python3
//   gcr.io/cloud-ml-public/training/*              -> python3   (AI Platform Training's)
// With PrebuiltImages::kContainer (a server with podman and a registry) Vertex's prebuilt PyTorch
// names (`.../training/pytorch-*`) are not host commands: they run as containers, and the image
// rewrite table (container/image_reference.h) maps them to trainyard/pytorch in the registry.
// Users add their own in a YAML file (trainyard server --image-catalog FILE); user entries are
// tried first, in file order:
//   images:
//     - uri: eu.gcr.io/*/pt_bert_sentiment:*     # '*' matches any run of characters
//       command: [python3, /home/me/bert/main.py]
//       env: {PYTHONUNBUFFERED: "1"}           # optional
// `imageUri: local` is reserved: it runs containerSpec.command as a plain host command. Any other
// image is the user's own: it runs as a container (docs/containers.md) where the executor has a
// container runtime.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "spec/custom_job.h"

namespace trainyard::spec {

inline constexpr std::string_view kLocalImage = "local";

struct ImageEntry {
  std::string uri_pattern;
  std::vector<std::string> command;  // the ENTRYPOINT
  std::map<std::string, std::string> env;
  // A built-in entry that keeps the image an image: Find() stops at it and answers nullptr, so
  // the job runs it as a container instead of matching a broader host-command entry below it.
  bool run_as_container = false;
};

// What Vertex's prebuilt PyTorch training image names run as.
enum class PrebuiltImages {
  kHost,       // host python3 (no container runtime, or `--prebuilt-images host`)
  kContainer,  // the image itself, rewritten to REGISTRY/trainyard/pytorch:latest
};

// A replica's resolved program: argv (argv[0] looked up in PATH) and the env the image adds; or,
// for an image that is neither `local` nor in the catalog, that image to run as a container with
// the ENTRYPOINT/CMD overrides (argv empty).
struct ResolvedCommand {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string image;        // empty = host command
  std::string image_field;  // "containerSpec.imageUri" or "pythonPackageSpec.executorImageUri"
  std::optional<std::vector<std::string>> command;  // containerSpec.command, when given
  std::optional<std::vector<std::string>> args;     // containerSpec.args, when given
  // Host paths the container needs at the same path (local pythonPackageSpec.packageUris).
  std::vector<std::string> mounts;
};

class ImageCatalog {
 public:
  // The built-in entries only.
  static ImageCatalog BuiltIn(PrebuiltImages prebuilt = PrebuiltImages::kHost);
  // Built-in entries plus the file's (tried first). INVALID_ARGUMENT naming the file, entry index
  // and key on malformed YAML, unknown keys, or an entry without uri/command; NOT_FOUND if the
  // file does not exist.
  static StatusOr<ImageCatalog> LoadFile(const std::filesystem::path& path,
                                         PrebuiltImages prebuilt = PrebuiltImages::kHost);

  // The first entry whose pattern matches the URI (an untagged URI also tries ":latest"), or
  // nullptr when none does or the first match is a run_as_container entry.
  const ImageEntry* Find(std::string_view image_uri) const;

  // Resolves a non-empty pool's command as Docker would: containerSpec.command replaces the
  // ENTRYPOINT, args follow. pythonPackageSpec runs `<entrypoint> -m <pythonModule> <args>`, the
  // package URIs resolved (gs:// to the bucket root): source archives and wheels installed by the
  // pip launcher first (python_package_launcher.h), directories and .zip on PYTHONPATH.
  // An image that is not in the catalog comes back as ResolvedCommand::image (the executor checks
  // the reference and runs it as a container): a containerSpec with its command/args as
  // ENTRYPOINT/CMD overrides; a pythonPackageSpec as `python3 -m <pythonModule>` (or the launcher)
  // with <args> as CMD and its packageUris as the container sees them (gs://B/x at /gcs/B/x,
  // Vertex's Cloud Storage FUSE path; local paths mounted at the same path). INVALID_ARGUMENT
  // naming `pool_path`'s field for a missing command or an unusable package URI.
  StatusOr<ResolvedCommand> Resolve(const WorkerPoolSpec& pool, const std::string& pool_path) const;

  const std::vector<ImageEntry>& entries() const { return entries_; }

  // Images a user may name that this catalog runs, for pickers (GET /v1/containerImages): every
  // entry without a wildcard (tagged :latest when untagged), then an example of Vertex's prebuilt
  // training and prediction image names the catalog (or the native serving runtime) takes.
  struct Suggestion {
    std::string image_uri;
    std::string description;
    std::string use;  // "TRAINING", "SERVING" or "BATCH_PREDICTION"
  };
  std::vector<Suggestion> Suggestions() const;

 private:
  std::vector<ImageEntry> entries_;
};

}  // namespace trainyard::spec
