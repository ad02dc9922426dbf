// How a pythonPackageSpec's packages reach its module, as Vertex does it: Vertex installs the
// packageUris with pip (`pip install`, dependencies included) and then runs `python -m MODULE`.
// Trainyard does the same for the files pip installs, source archives (`.tar.gz`, `.tgz`: what
// `python setup.py sdist`, `python -m build --sdist` and the Vertex SDK's CustomTrainingJob
// upload) and wheels (`.whl`); directories and `.zip` files go on PYTHONPATH as they are.
//
// The install runs in the replica itself (inside its container, or as the host command), through
// a launcher handed to the image's python as `python -c LAUNCHER`:
//   0. AIP_MODEL_DIR, when set (gs:// under TRAINYARD_BUCKET_ROOT; /gcs/... in a container), is
//      made if missing and a directory is made and removed in it, as the replica's user: one it
//      cannot write ends the replica at once with exit code 78 (replica_contract::kExitConfig: not
//      restarted) and one stderr line naming the path, its owner and mode, the replica's uid and
//      the fix, before any package is installed or user code runs;
//   1. `python -m pip install --user --no-build-isolation PKG...` into a fresh PYTHONUSERBASE
//      (a directory under the replica's working directory, else under $TMPDIR), so concurrent
//      replicas and attempts never share an install; dependencies (install_requires, which holds
//      the Vertex SDK's `requirements=`) come from the package index pip is configured with (the
//      executor hands a container the host's: executor/package_index.h), through the
//      project's pip cache when the executor sets PIP_CACHE_DIR (else --no-cache-dir). pip's
//      output goes to the job log, then one line `[trainyard] installed in N s: NAME==VERSION,
//      ...`; PIP_BREAK_SYSTEM_PACKAGES=1 lets pip install into a Debian python (PEP 668) for that
//      user base only; where the python has setuptools with bdist_wheel, build isolation is off (it
//      downloads setuptools from an index, which offline machines cannot reach) and the image's
//      own setuptools builds the archive;
//   2. `exec python -m MODULE ARGS` with that PYTHONUSERBASE, so the module is the replica's
//      process (PID 1 in its container) and receives its signals.
// Without pip in that python: wheels alone go on PYTHONPATH (said in the log: their dependencies
// are not installed); a source archive ends the replica with exit code 2 and a message naming
// the fix. A failed install ends it with pip's exit code, except when a requirement is on no
// index pip can see ("No matching distribution found for X") or the index cannot be reached:
// then exit code 78 (not restarted: the same install would fail again) and lines naming the
// requirement and where pip looked (index-url, extra-index-url, find-links), plus the declared
// dependencies (requires.txt, Requires-Dist) the image's python lacks.
// SIGTERM/SIGINT during the install stop pip and end the replica with 128+N.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trainyard::spec {

// True for the package files pip installs (.tar.gz, .tgz, .whl).
bool IsPipInstalledPackage(std::string_view uri);

// The launcher's Python source (see above).
const std::string& PythonPackageLauncherSource();

// `python -c LAUNCHER N PKG... MODULE`: the argv that installs `packages` (paths as the replica
// sees them) and runs `module` with the arguments that follow it. `python` is the image's
// interpreter command (one or more words, e.g. {"python3"}).
std::vector<std::string> PythonPackageLauncherArgv(const std::vector<std::string>& python,
                                                   const std::vector<std::string>& packages,
                                                   const std::string& module);

}  // namespace trainyard::spec
