// trainyard ai custom-jobs local-run: run a training program on this machine, in the foreground,
// without a server — gcloud's local-run, with the image catalog standing in for `docker run`.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "command_common.h"
#include "commands.h"
#include "common/exit_code.h"
#include "spec/image_catalog.h"

extern char** environ;

namespace trainyard::cli {
namespace {

struct LocalRunFlags {
  std::string executor_image_uri;
  std::string local_package_path;
  std::string python_module;
  std::string script;
  std::string requirements;
  std::string extra_packages;
  std::string extra_dirs;
  std::string output_image_uri;
  std::string service_account_key_file;
  std::string image_catalog;
  bool gpu = false;
  std::vector<std::string> args;
};

StatusOr<int> Run(const LocalRunFlags& f) {
  if (!f.requirements.empty() || !f.extra_packages.empty()) {
    return InvalidArgumentError(
        "--requirements/--extra-packages: local-run does not install packages; install them on "
        "this host (pip install ...) and run again");
  }
  if (!f.python_module.empty() && !f.script.empty()) {
    return InvalidArgumentError("--python-module and --script are mutually exclusive");
  }
  std::string catalog_path = f.image_catalog;
  if (catalog_path.empty()) {
    if (const char* env = std::getenv("TRAINYARD_IMAGE_CATALOG"); env && *env) catalog_path = env;
  }
  spec::ImageCatalog catalog = spec::ImageCatalog::BuiltIn();
  if (!catalog_path.empty()) {
    TY_ASSIGN_OR_RETURN(catalog, spec::ImageCatalog::LoadFile(catalog_path));
  }
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  if (f.executor_image_uri != spec::kLocalImage) {
    const spec::ImageEntry* entry = catalog.Find(f.executor_image_uri);
    if (!entry) {
      return InvalidArgumentError("--executor-image-uri: image '" + f.executor_image_uri +
                                  "' is not in the image catalog; add it to the file given by "
                                  "--image-catalog / $TRAINYARD_IMAGE_CATALOG, or use 'local'");
    }
    argv = entry->command;
    env = entry->env;
  }
  std::filesystem::path workdir = f.local_package_path.empty()
                                      ? std::filesystem::current_path()
                                      : std::filesystem::path(f.local_package_path);
  if (!std::filesystem::is_directory(workdir)) {
    return InvalidArgumentError("--local-package-path: '" + workdir.string() +
                                "' is not a directory");
  }
  if (!f.python_module.empty()) {
    if (argv.empty()) argv = {"python3"};
    argv.push_back("-m");
    argv.push_back(f.python_module);
  } else if (!f.script.empty()) {
    std::filesystem::path script = workdir / f.script;
    if (!std::filesystem::exists(script)) {
      return InvalidArgumentError("--script: '" + script.string() + "' does not exist");
    }
    if (script.extension() == ".py") {
      if (argv.empty()) argv = {"python3"};
      argv.push_back(script.string());
    } else {
      argv = {"/bin/sh", script.string()};
    }
  } else if (argv.empty()) {
    return InvalidArgumentError("give --python-module or --script (or an image from the catalog)");
  }
  argv.insert(argv.end(), f.args.begin(), f.args.end());
  if (!f.gpu) env["CUDA_VISIBLE_DEVICES"] = "";  // like `docker run` without --gpus
  if (!f.service_account_key_file.empty()) {
    env["GOOGLE_APPLICATION_CREDENTIALS"] = f.service_account_key_file;
  }

  std::cerr << "Running:";
  for (const auto& a : argv) std::cerr << " " << a;
  std::cerr << "\n  in " << workdir.string() << "\n" << std::flush;
  pid_t pid = ::fork();
  if (pid < 0) return InternalError("fork failed");
  if (pid == 0) {
    if (::chdir(workdir.c_str()) != 0) _exit(127);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void RegisterLocalRunCommand(CLI::App& custom_jobs, int* exit_code) {
  auto* cmd = custom_jobs.add_subcommand(
      "local-run", "Run a training program on this machine in the foreground (no server)");
  auto f = std::make_shared<LocalRunFlags>();
  cmd->add_option("--executor-image-uri", f->executor_image_uri,
                  "Image from the image catalog whose command runs the code, or 'local'")
      ->required();
  cmd->add_option("--local-package-path", f->local_package_path, "Directory with the code");
  cmd->add_option("--python-module", f->python_module, "Module to run with -m");
  cmd->add_option("--script", f->script, "Script relative to --local-package-path (.py or shell)");
  cmd->add_option("--requirements", f->requirements, "Not supported (install on the host)");
  cmd->add_option("--extra-packages", f->extra_packages, "Not supported (install on the host)");
  cmd->add_option("--extra-dirs", f->extra_dirs, "Accepted; the code runs in place");
  cmd->add_option("--output-image-uri", f->output_image_uri, "Accepted; no image is built");
  cmd->add_option("--service-account-key-file", f->service_account_key_file,
                  "Exported as GOOGLE_APPLICATION_CREDENTIALS");
  cmd->add_option("--image-catalog", f->image_catalog,
                  "Image catalog YAML (default $TRAINYARD_IMAGE_CATALOG, else built-in)");
  cmd->add_flag("--gpu", f->gpu, "Let the program see the GPUs");
  cmd->add_option("args", f->args, "Arguments for the program, after --");
  cmd->callback([f, exit_code] {
    if (CheckCommandLineOnly()) return;
    auto code = Run(*f);
    if (!code.ok()) {
      PrintError("trainyard.ai.custom-jobs.local-run", code.status().ToString());
      *exit_code = ExitCodeFor(code.status());
      return;
    }
    *exit_code = *code;
  });
}

}  // namespace trainyard::cli
