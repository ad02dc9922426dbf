#include "container/gpu_devices.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <set>
#include <system_error>

namespace trainyard::container {
namespace {

namespace fs = std::filesystem;

struct CdiSpec {
  fs::path file;
  std::set<std::string> devices;  // device names: "0", "1", "all", UUIDs
};

// The first CDI spec of kind nvidia.com/gpu in `dirs` (files in name order, JSON or YAML).
std::optional<CdiSpec> FindNvidiaCdiSpec(const std::vector<fs::path>& dirs) {
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::string ext = entry.path().extension().string();
      if (ext == ".json" || ext == ".yaml" || ext == ".yml") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      try {
        YAML::Node spec = YAML::LoadFile(file.string());
        if (!spec["kind"] || spec["kind"].as<std::string>() != "nvidia.com/gpu") continue;
        CdiSpec out{file, {}};
        for (const auto& device : spec["devices"]) {
          if (device["name"]) out.devices.insert(device["name"].as<std::string>());
        }
        return out;
      } catch (const YAML::Exception&) {
        continue;  // not a CDI spec we can read; podman would skip it too
      }
    }
  }
  return std::nullopt;
}

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace

StatusOr<GpuAccess> ResolveGpuAccess(const std::vector<int>& gpus,
                                     const std::vector<fs::path>& cdi_dirs,
                                     const fs::path& dev_dir) {
  GpuAccess access;
  if (gpus.empty()) return access;
  for (int g : gpus) {
    if (g < 0) return InvalidArgumentError("GPU index must be >= 0, got " + std::to_string(g));
  }
  if (std::optional<CdiSpec> cdi = FindNvidiaCdiSpec(cdi_dirs)) {
    access.how = "cdi:" + cdi->file.string();
    for (size_t i = 0; i < gpus.size(); ++i) {
      std::string name = std::to_string(gpus[i]);
      if (!cdi->devices.contains(name)) {
        return FailedPreconditionError(
            "GPU " + name + " is not in the CDI spec " + cdi->file.string() +
            " (devices: " + Join(cdi->devices) +
            "); regenerate it with `nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`");
      }
      access.devices.push_back("nvidia.com/gpu=" + name);
      access.cuda_visible_devices += (i ? "," : "") + std::to_string(i);
    }
    return access;
  }
  access.how = "device nodes";
  std::error_code ec;
  for (size_t i = 0; i < gpus.size(); ++i) {
    fs::path node = dev_dir / ("nvidia" + std::to_string(gpus[i]));
    if (!fs::exists(node, ec)) {
      std::string searched;
      for (const auto& d : cdi_dirs) searched += (searched.empty() ? "" : ", ") + d.string();
      return FailedPreconditionError(
          "GPU " + std::to_string(gpus[i]) + " cannot be passed into the container: no CDI spec " +
          "of kind nvidia.com/gpu in " + searched + " and no device " + node.string() +
          "; install the NVIDIA driver and nvidia-container-toolkit, then run `nvidia-ctk cdi " +
          "generate --output=/etc/cdi/nvidia.yaml`");
    }
    access.cuda_visible_devices += (i ? "," : "") + std::to_string(gpus[i]);
  }
  // Every GPU node, so CUDA numbers devices as on the host and CUDA_VISIBLE_DEVICES means the same.
  std::vector<std::string> nodes;
  for (const auto& entry : fs::directory_iterator(dev_dir, ec)) {
    std::string name = entry.path().filename().string();
    bool numbered = name.size() > 6 && name.starts_with("nvidia") &&
                    std::all_of(name.begin() + 6, name.end(), ::isdigit);
    bool control = name == "nvidiactl" || name == "nvidia-uvm" || name == "nvidia-uvm-tools" ||
                   name == "nvidia-modeset";
    if (numbered || control) nodes.push_back(entry.path().string());
  }
  std::sort(nodes.begin(), nodes.end());
  access.devices = nodes;
  return access;
}

}  // namespace trainyard::container
