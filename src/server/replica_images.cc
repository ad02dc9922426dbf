#include "server/replica_images.h"

#include "common/file_util.h"
#include "common/path_lookup.h"
#ifdef TRAINYARD_HAVE_CONTAINERS
#include "container/podman_replica_runtime.h"
#endif

namespace trainyard::server {
namespace {

// `why` gets the reason, for the start-up line.
StatusOr<spec::PrebuiltImages> ChoosePrebuiltImages(const ContainerOptions& o, std::string* why) {
  if (o.prebuilt_images == "host") {
    *why = "--prebuilt-images host";
    return spec::PrebuiltImages::kHost;
  }
  std::string missing;
#ifdef TRAINYARD_HAVE_CONTAINERS
  const std::string registry = container::RegistryOrEnv(o.registry);
#else
  const std::string registry;
  missing = "this build has no container support";
#endif
  if (missing.empty() && o.no_containers) missing = "started with --no-containers";
  if (missing.empty() && !OnPath("podman")) missing = "podman is not on PATH";
  if (missing.empty() && registry.empty())
    missing = "no registry (--registry, $TRAINYARD_REGISTRY)";
  if (!missing.empty()) {
    if (o.prebuilt_images == "container") {
      return FailedPreconditionError("--prebuilt-images container: " + missing);
    }
    *why = missing;
    return spec::PrebuiltImages::kHost;
  }
  // A rewrite file replaces the default rules, the one to trainyard/pytorch included.
  *why = o.image_rewrites.empty()
             ? "as " + registry +
                   "/trainyard/pytorch:latest (scripts/build-images.sh pytorch builds it)"
             : "as " + o.image_rewrites + " rewrites them";
  return spec::PrebuiltImages::kContainer;
}

}  // namespace

StatusOr<spec::ImageCatalog> LoadImageCatalog(const ContainerOptions& options,
                                              const std::filesystem::path& catalog_file,
                                              std::ostream& log) {
  std::string why;
  TY_ASSIGN_OR_RETURN(spec::PrebuiltImages prebuilt, ChoosePrebuiltImages(options, &why));
  log << "Vertex's prebuilt PyTorch images run "
      << (prebuilt == spec::PrebuiltImages::kContainer ? "as containers, " : "as host python3: ")
      << why << "\n";
  if (catalog_file.empty()) return spec::ImageCatalog::BuiltIn(prebuilt);
  return spec::ImageCatalog::LoadFile(catalog_file, prebuilt);
}

StatusOr<ContainerRuntime> StartContainerRuntime(const ContainerOptions& options) {
  ContainerRuntime out;
#ifdef TRAINYARD_HAVE_CONTAINERS
  if (options.no_containers) {
    out.no_container_reason = "started with --no-containers";
    return out;
  }
  container::PodmanReplicaRuntimeOptions ropts;
  ropts.registry = options.registry;
  if (!options.podman_storage.empty()) {
    const std::filesystem::path dir = std::filesystem::absolute(options.podman_storage);
    ropts.podman.global_args = {"--root", (dir / "storage").string(), "--runroot",
                                (dir / "run").string()};
  }
  ropts.podman.pull_timeout = std::chrono::seconds(options.pull_timeout_seconds);
  if (!options.image_rewrites.empty()) {
    TY_ASSIGN_OR_RETURN(std::string text, ReadFile(options.image_rewrites));
    TY_ASSIGN_OR_RETURN(ropts.rewrite_rules,
                        container::ParseImageRewriteRules(text, options.image_rewrites));
  }
  out.runtime = std::make_unique<container::PodmanReplicaRuntime>(std::move(ropts));
#else
  out.no_container_reason = "this build has no container support";
#endif
  return out;
}

}  // namespace trainyard::server
