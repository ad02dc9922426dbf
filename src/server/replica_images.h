// How the images jobs name become replicas (docs/containers.md): the image catalog (image URI ->
// local command), what Vertex's prebuilt PyTorch names run as, and the podman runtime that runs
// every other image as a container.
#pragma once

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include "common/status.h"
#include "executor/replica_runtime.h"
#include "spec/image_catalog.h"

namespace trainyard::server {

struct ContainerOptions {
  std::string registry;        // REGISTRY of the image rewrite table; empty = $TRAINYARD_REGISTRY
  std::string image_rewrites;  // a rewrite file replacing the default rules; "" = the defaults
  bool no_containers = false;  // never run images as containers
  std::string prebuilt_images = "auto";  // auto | container | host
  std::string podman_storage;            // private podman storage (--root/--runroot) under this
  int pull_timeout_seconds = 900;        // an image pull's deadline, retries included
};

// The built-in catalog plus `catalog_file` ("" = none). Prebuilt PyTorch names run as containers
// (`container`, or `auto` when this build has containers, podman is on PATH and a registry is
// known), else as host python3; the choice and its reason go to `log`. FAILED_PRECONDITION for
// --prebuilt-images container on a server that cannot; the file's errors (ImageCatalog::LoadFile).
StatusOr<spec::ImageCatalog> LoadImageCatalog(const ContainerOptions& options,
                                              const std::filesystem::path& catalog_file,
                                              std::ostream& log);

struct ContainerRuntime {
  std::unique_ptr<executor::ReplicaRuntime> runtime;  // null: images are refused, because...
  std::string no_container_reason;                    // ...this (when runtime is null)
};

// A PodmanReplicaRuntime per `options`, or none with the reason (--no-containers, a build without
// container support). INVALID_ARGUMENT / NOT_FOUND for an unreadable or malformed rewrite file.
StatusOr<ContainerRuntime> StartContainerRuntime(const ContainerOptions& options);

}  // namespace trainyard::server
