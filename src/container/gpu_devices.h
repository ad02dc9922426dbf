// How a replica's GPUs get into its container.
//
//   - CDI (Container Device Interface): when a spec of kind "nvidia.com/gpu" exists in one of the
//     CDI directories (/etc/cdi, /var/run/cdi; written by `nvidia-ctk cdi generate`), each GPU is
//     passed as `--device nvidia.com/gpu=N`. The spec also injects the driver libraries; the
//     container sees only its GPUs, numbered from 0, so CUDA_VISIBLE_DEVICES is "0,1,...".
//   - Device nodes otherwise: every /dev/nvidia<N> of the host plus the control nodes
//     (nvidiactl, nvidia-uvm, nvidia-uvm-tools, nvidia-modeset) are passed and
//     CUDA_VISIBLE_DEVICES holds the host indices, exactly as host-process replicas get them. The
//     image must then carry a user-space driver matching the host's (docs/containers.md).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/status.h"

namespace trainyard::container {

struct GpuAccess {
  std::vector<std::string> devices;  // values for `podman run --device`
  std::string cuda_visible_devices;  // "" when no GPU was asked for
  std::string how;                   // "cdi:/etc/cdi/nvidia.yaml" or "device nodes"; "" if none
};

// FAILED_PRECONDITION when a GPU cannot be passed: a CDI spec exists but does not list index N,
// or there is no CDI spec and no <dev_dir>/nvidia<N>; the message names what was looked for and
// how to fix it. INVALID_ARGUMENT for a negative index. No GPUs: OK with nothing to pass.
StatusOr<GpuAccess> ResolveGpuAccess(const std::vector<int>& gpus,
                                     const std::vector<std::filesystem::path>& cdi_dirs,
                                     const std::filesystem::path& dev_dir);

}  // namespace trainyard::container
