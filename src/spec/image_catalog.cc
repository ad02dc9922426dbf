#include "spec/image_catalog.h"

#include <fnmatch.h>
#include <yaml-cpp/yaml.h>

#include "common/bucket_path.h"
#include "common/file_util.h"
#include "spec/python_package_launcher.h"

namespace trainyard::spec {

ImageCatalog ImageCatalog::BuiltIn(PrebuiltImages prebuilt) {
  ImageCatalog c;
  c.entries_.push_back({"trainyard/bert-sentiment", {"trainyard-bert", "train"}, {}});
  c.entries_.push_back({"trainyard/bert-sentiment:*", {"trainyard-bert", "train"}, {}});
  // The native serving runtime of endpoints (controller/endpoint_controller.h).
  c.entries_.push_back({"trainyard/bert-serve", {"trainyard-bert", "serve"}, {}});
  c.entries_.push_back({"trainyard/bert-serve:*", {"trainyard-bert", "serve"}, {}});
  c.entries_.push_back({"trainyard/bert-batch-predict", {"trainyard-bert", "batch-predict"}, {}});
  c.entries_.push_back({"trainyard/bert-batch-predict:*", {"trainyard-bert", "batch-predict"}, {}});
  if (prebuilt == PrebuiltImages::kContainer) {
    for (const char* pattern : {"*-docker.pkg.dev/vertex-ai/training/pytorch-*",
                                "gcr.io/cloud-aiplatform/training/pytorch-*",
                                "gcr.io/cloud-ml-public/training/pytorch-*"}) {
      c.entries_.push_back({pattern, {}, {}, /*run_as_container=*/true});
    }
  }
  c.entries_.push_back(
      {"*-docker.pkg.dev/vertex-ai/training/*", {"python3"}, {{"PYTHONUNBUFFERED", "1"}}});
  c.entries_.push_back(
      {"gcr.io/cloud-aiplatform/training/*", {"python3"}, {{"PYTHONUNBUFFERED", "1"}}});
  // AI Platform Training's prebuilt PyTorch containers (gcr.io/cloud-ml-public/training/pytorch-*).
  c.entries_.push_back(
      {"gcr.io/cloud-ml-public/training/*", {"python3"}, {{"PYTHONUNBUFFERED", "1"}}});
  return c;
}

std::vector<ImageCatalog::Suggestion> ImageCatalog::Suggestions() const {
  std::vector<Suggestion> out;
  auto use_of = [](const std::vector<std::string>& command) {
    for (const std::string& c : command) {
      if (c == "serve") return "SERVING";
      if (c == "batch-predict") return "BATCH_PREDICTION";
    }
    return "TRAINING";
  };
  for (const ImageEntry& e : entries_) {
    if (e.uri_pattern.find('*') != std::string::npos || e.uri_pattern == kLocalImage) continue;
    const bool tagged = e.uri_pattern.find(':', e.uri_pattern.rfind('/') + 1) != std::string::npos;
    std::string command;
    for (const std::string& c : e.command) command += (command.empty() ? "" : " ") + c;
    out.push_back({tagged ? e.uri_pattern : e.uri_pattern + ":latest", "runs `" + command + "`",
                   use_of(e.command)});
  }
  const std::string training = "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest";
  if (const ImageEntry* e = Find(training)) {
    out.push_back(
        {training, "Vertex's prebuilt PyTorch training image: runs `python3` here", "TRAINING"});
  } else {
    for (const ImageEntry& c : entries_) {
      if (c.run_as_container && ::fnmatch(c.uri_pattern.c_str(), training.c_str(), 0) == 0) {
        out.push_back({training,
                       "Vertex's prebuilt PyTorch training image: runs as the "
                       "trainyard/pytorch container",
                       "TRAINING"});
        break;
      }
    }
  }
  out.push_back({"us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest",
                 "Vertex's prebuilt PyTorch prediction image: a BERT classifier trainyard-bert "
                 "exported is served natively behind it",
                 "SERVING"});
  return out;
}

StatusOr<ImageCatalog> ImageCatalog::LoadFile(const std::filesystem::path& path,
                                              PrebuiltImages prebuilt) {
  TY_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  const std::string where = "image catalog " + path.string();
  ImageCatalog user;
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap() || !root["images"] || !root["images"].IsSequence()) {
      return InvalidArgumentError(where + ": expected a top-level 'images:' list");
    }
    for (const auto& top : root) {
      if (top.first.as<std::string>() != "images") {
        return InvalidArgumentError(where + ": unknown top-level key '" +
                                    top.first.as<std::string>() + "'; only 'images' is allowed");
      }
    }
    size_t i = 0;
    for (const auto& node : root["images"]) {
      const std::string at = where + ": images[" + std::to_string(i++) + "]";
      if (!node.IsMap()) return InvalidArgumentError(at + ": expected a map with uri and command");
      ImageEntry e;
      for (const auto& kv : node) {
        std::string key = kv.first.as<std::string>();
        if (key == "uri") {
          e.uri_pattern = kv.second.as<std::string>();
        } else if (key == "command") {
          if (kv.second.IsScalar()) {
            e.command.push_back(kv.second.as<std::string>());
          } else if (kv.second.IsSequence()) {
            for (const auto& a : kv.second) e.command.push_back(a.as<std::string>());
          } else {
            return InvalidArgumentError(at + ".command: expected a list of strings");
          }
        } else if (key == "env") {
          if (!kv.second.IsMap()) return InvalidArgumentError(at + ".env: expected a map");
          for (const auto& ev : kv.second) {
            e.env[ev.first.as<std::string>()] = ev.second.as<std::string>();
          }
        } else {
          return InvalidArgumentError(at + ": unknown key '" + key +
                                      "'; allowed keys are uri, command, env");
        }
      }
      if (e.uri_pattern.empty()) return InvalidArgumentError(at + ".uri: required");
      if (e.command.empty()) return InvalidArgumentError(at + ".command: required");
      user.entries_.push_back(std::move(e));
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(where + ": " + e.what());
  }
  for (auto& e : BuiltIn(prebuilt).entries_) user.entries_.push_back(std::move(e));
  return user;
}

const ImageEntry* ImageCatalog::Find(std::string_view image_uri) const {
  std::string uri(image_uri);
  bool has_tag = uri.find(':', uri.rfind('/') == std::string::npos ? 0 : uri.rfind('/')) !=
                     std::string::npos ||
                 uri.find('@') != std::string::npos;
  for (const auto& e : entries_) {
    if (::fnmatch(e.uri_pattern.c_str(), uri.c_str(), 0) == 0 ||
        (!has_tag && ::fnmatch(e.uri_pattern.c_str(), (uri + ":latest").c_str(), 0) == 0)) {
      return e.run_as_container ? nullptr : &e;
    }
  }
  return nullptr;
}

namespace {

StatusOr<ResolvedCommand> ResolveContainer(const ImageCatalog& catalog, const ContainerSpec& c,
                                           const std::string& pool_path) {
  ResolvedCommand out;
  if (c.image_uri == kLocalImage) {
    if (c.command.empty()) {
      return InvalidArgumentError(pool_path +
                                  ".containerSpec.command: required when imageUri is \"local\" "
                                  "(the host command to run)");
    }
    out.argv = c.command;
  } else {
    const ImageEntry* e = catalog.Find(c.image_uri);
    if (!e) {
      // The user's own image: run as a container, command/args as ENTRYPOINT/CMD overrides.
      out.image = c.image_uri;
      out.image_field = "containerSpec.imageUri";
      if (!c.command.empty()) out.command = c.command;
      if (!c.args.empty()) out.args = c.args;
      for (const auto& v : c.env) out.env[v.name] = v.value;
      return out;
    }
    out.argv = c.command.empty() ? e->command : c.command;
    out.env = e->env;
  }
  out.argv.insert(out.argv.end(), c.args.begin(), c.args.end());
  for (const auto& v : c.env) out.env[v.name] = v.value;
  return out;
}

// Where each package URI is read from, split into archives pip installs (`to_install`) and
// directories or modules put on PYTHONPATH (`on_path`). In a user's image (out->image set) a
// gs:// URI is read under /gcs and any other path is mounted (out->mounts).
Status PlacePackages(const PythonPackageSpec& p, const std::string& pool_path, ResolvedCommand* out,
                     std::vector<std::string>* on_path, std::vector<std::string>* to_install) {
  for (size_t i = 0; i < p.package_uris.size(); ++i) {
    const std::string& uri = p.package_uris[i];
    auto local = ResolveStoragePath(uri);
    if (!local.ok()) {
      return InvalidArgumentError(pool_path + ".pythonPackageSpec.packageUris[" +
                                  std::to_string(i) + "]: " + local.status().message());
    }
    std::string path = local->string();
    if (!out->image.empty()) {
      if (uri.starts_with("gs://")) {
        path = "/gcs/" + uri.substr(5);  // the bucket root is mounted at /gcs
      } else {
        out->mounts.push_back(path);
      }
    }
    (IsPipInstalledPackage(uri) ? *to_install : *on_path).push_back(path);
  }
  return Status::Ok();
}

StatusOr<ResolvedCommand> ResolvePythonPackage(const ImageCatalog& catalog,
                                               const PythonPackageSpec& p,
                                               const std::string& pool_path) {
  ResolvedCommand out;
  const ImageEntry* e = catalog.Find(p.executor_image_uri);
  if (!e) {
    // The user's executor image: Vertex runs `python -m MODULE ARGS` in it.
    out.image = p.executor_image_uri;
    out.image_field = "pythonPackageSpec.executorImageUri";
  }
  std::vector<std::string> on_path, to_install;
  TY_RETURN_IF_ERROR(PlacePackages(p, pool_path, &out, &on_path, &to_install));
  // `python -m MODULE`, through the pip launcher when packages are to be installed; ARGS follow
  // (as the container's CMD for an image).
  const std::vector<std::string> python = e ? e->command : std::vector<std::string>{"python3"};
  std::vector<std::string> program = python;
  if (to_install.empty()) {
    program.push_back("-m");
    program.push_back(p.python_module);
  } else {
    program = PythonPackageLauncherArgv(python, to_install, p.python_module);
  }
  if (e) {
    out.argv = std::move(program);
    out.argv.insert(out.argv.end(), p.args.begin(), p.args.end());
    out.env = e->env;
  } else {
    out.command = std::move(program);
    out.args = p.args;
  }
  for (const auto& v : p.env) out.env[v.name] = v.value;
  std::string pythonpath;
  for (const std::string& path : on_path) pythonpath += (pythonpath.empty() ? "" : ":") + path;
  if (!pythonpath.empty()) {
    out.env["PYTHONPATH"] =
        out.env.count("PYTHONPATH") ? pythonpath + ":" + out.env["PYTHONPATH"] : pythonpath;
  }
  return out;
}

}  // namespace

StatusOr<ResolvedCommand> ImageCatalog::Resolve(const WorkerPoolSpec& pool,
                                                const std::string& pool_path) const {
  if (pool.container_spec) return ResolveContainer(*this, *pool.container_spec, pool_path);
  if (pool.python_package_spec) {
    return ResolvePythonPackage(*this, *pool.python_package_spec, pool_path);
  }
  return InvalidArgumentError(pool_path +
                              ": one of containerSpec or pythonPackageSpec is required");
}

}  // namespace trainyard::spec
