#include "spec/python_package_launcher.h"

namespace trainyard::spec {

bool IsPipInstalledPackage(std::string_view uri) {
  return uri.ends_with(".tar.gz") || uri.ends_with(".tgz") || uri.ends_with(".whl");
}

// One long function because it is data: the launcher is a single embedded Python script, kept
// whole so it reads (and diffs) as the file the replica runs. Kept to what Python 3.6's standard
// library has: executor images carry old pythons too.
const std::string& PythonPackageLauncherSource() {
  static const std::string source = R"PY(
import importlib.util, os, re, signal, subprocess, sys, tempfile, time


def say(text, stream=sys.stderr):
    stream.write("[trainyard] " + text + "\n")
    stream.flush()


def fresh_user_base():
    try:
        return tempfile.mkdtemp(prefix=".trainyard-python-", dir=os.getcwd())
    except OSError:
        return tempfile.mkdtemp(prefix="trainyard-python-")


def can_build_here():
    # setuptools with bdist_wheel (its own since 70.1, else the wheel package's): then an archive
    # builds without pip's isolated build environment, which downloads them from an index.
    found = importlib.util.find_spec
    return found("setuptools") is not None and (
        found("wheel") is not None or found("setuptools.command.bdist_wheel") is not None)


def requirement_names(lines):
    names = []
    for line in lines:
        spec, _, marker = line.partition(";")
        if "extra" in marker:
            continue
        name = re.split(r"[\s<>=!~\[(,]", spec.strip(), 1)[0]
        if name:
            names.append(name)
    return names


def declared_requirements(path):
    # What a package says it needs: a setuptools sdist's <name>.egg-info/requires.txt (up to its
    # first [extra] section), else its PKG-INFO's or a wheel's METADATA's Requires-Dist lines.
    def requires_dist(text):
        return [l[len("Requires-Dist:"):] for l in text.splitlines() if l.startswith("Requires-Dist:")]
    try:
        if path.endswith(".whl"):
            import zipfile
            with zipfile.ZipFile(path) as z:
                for n in z.namelist():
                    if n.endswith(".dist-info/METADATA"):
                        return requirement_names(requires_dist(z.read(n).decode("utf-8", "replace")))
            return []
        import tarfile
        found = []
        with tarfile.open(path) as t:
            for m in t.getmembers():
                text = lambda: t.extractfile(m).read().decode("utf-8", "replace")
                if m.name.endswith(".egg-info/requires.txt"):
                    return requirement_names(text().split("\n[")[0].splitlines())
                if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO"):
                    found = requirement_names(requires_dist(text()))
        return found
    except Exception:
        return []


def not_installed(names):
    try:
        from importlib import metadata
    except ImportError:
        return []  # before Python 3.8 the launcher cannot tell; pip's message stands
    missing = []
    for name in names:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if name not in missing:
                missing.append(name)
    return missing


def pip_config():
    # pip's own view of its settings (files and PIP_* variables), for messages: {key: value}.
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, universal_newlines=True, timeout=60).stdout
    except Exception:
        return {}
    found = {}
    for line in out.splitlines():
        key, _, value = line.partition("=")
        found[key.rpartition(".")[2]] = value.strip().strip("'\"")
    return found


def index_description():
    # Where pip looked: the index (pip's default when nothing sets one), extra indexes, find-links.
    config = pip_config()
    where = []
    if config.get("no-index", "").lower() not in ("1", "true", "yes", "on"):
        where.append("the package index %s" % config.get("index-url", "https://pypi.org/simple"))
        if config.get("extra-index-url"):
            where.append("the extra index " + config["extra-index-url"])
    if config.get("find-links"):
        where.append("the wheelhouse " + config["find-links"])
    return " and ".join(where) or "nowhere (pip has no-index and no find-links)"


def index_unreachable(config):
    # Asks the index through pip itself (its proxy, certificate and retry settings) for pip's own
    # versions: True when that fails, so "not found" was really "could not ask".
    if config.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        return False
    try:
        probe = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "pip"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               universal_newlines=True, timeout=120)
    except Exception:
        return False
    return probe.returncode != 0 and "unknown command" not in probe.stderr


def relay_stderr(stream, seen):
    # pip's stderr goes to the job log line by line; what it says of missing packages is kept.
    for line in iter(stream.readline, ""):
        sys.stderr.write(line)
        sys.stderr.flush()
        found = re.search(r"No matching distribution found for (\S+)", line)
        if found:
            seen["missing"].append(found.group(1))
        if re.search(r"Retrying \(|NewConnectionError|Failed to establish|Name or service not "
                     r"known|Connection refused|timed out|SSLError|CERTIFICATE_VERIFY_FAILED", line):
            seen["unreachable"] = True


def explain_failure(code, packages, seen):
    say("pip install failed with exit code %d (its output is above)" % code)
    missing = not_installed([n for p in packages for n in declared_requirements(p)])
    if seen["missing"] and not seen["unreachable"]:
        seen["unreachable"] = index_unreachable(pip_config())
    if seen["missing"] or seen["unreachable"]:
        if seen["unreachable"]:
            say("pip could not reach %s (its errors are above): check the host's pip "
                "configuration (/etc/pip.conf, PIP_INDEX_URL, proxy, certificate), or give the "
                "replicas a wheelhouse (PIP_FIND_LINKS=/gcs/BUCKET/wheels with PIP_NO_INDEX=1; "
                "docs/containers.md)" % index_description())
        else:
            say("%s was not found on %s: check its name and version in the package's "
                "install_requires or the job's requirements, or publish it there"
                % (", ".join(seen["missing"]), index_description()))
        if missing:
            say("the packages need %s, which this image's python (%s) does not have and no "
                "package index provided: run the job in an image that has them (gcloud "
                "ai-platform: --master-image-uri; Vertex: executorImageUri or containerSpec), or "
                "make a package index reachable from the replicas (PIP_INDEX_URL)"
                % (", ".join(missing), sys.executable))
        say("not restarted: the same install would fail again")
        return 78  # EX_CONFIG (replica_contract::kExitConfig)
    return 128 - code if code < 0 else code


def log_installed(seconds):
    # What pip put in this replica's user base, with versions, in one line of the job log.
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "list", "--user", "--format=freeze"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             universal_newlines=True, timeout=120).stdout
    except Exception:
        return
    say("installed in %.1f s: %s" % (seconds, ", ".join(out.split()) or
                                     "nothing new (the image had it all)"), sys.stdout)


def install(packages):
    base = fresh_user_base()
    env = dict(os.environ)
    env.update(PYTHONUSERBASE=base, PIP_BREAK_SYSTEM_PACKAGES="1", PIP_NO_INPUT="1",
               PIP_ROOT_USER_ACTION="ignore", PIP_DISABLE_PIP_VERSION_CHECK="1")
    say("pip install " + " ".join(packages), sys.stdout)  # in order with pip's own output
    pip = []
    stopped = []

    def forward(sig, frame):
        stopped.append(sig)
        if pip:
            pip[0].send_signal(sig)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    command = [sys.executable, "-m", "pip", "install", "--user", "--no-warn-script-location",
               "--progress-bar", "off"]
    # The executor's per-project cache (PIP_CACHE_DIR) is shared by the project's jobs on this
    # host; without one, nothing is cached (a replica's HOME may not be writable).
    if not os.environ.get("PIP_CACHE_DIR"):
        command.append("--no-cache-dir")
    if can_build_here():
        command.append("--no-build-isolation")
    seen = {"missing": [], "unreachable": False}
    started = time.time()
    if not stopped:
        import threading
        pip.append(subprocess.Popen(command + packages, env=env, stderr=subprocess.PIPE,
                                    universal_newlines=True, errors="replace"))
        relay = threading.Thread(target=relay_stderr, args=(pip[0].stderr, seen))
        relay.start()
        code = pip[0].wait()
        relay.join()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    if stopped:
        return 128 + stopped[0]
    if code != 0:
        return explain_failure(code, packages, seen)
    os.environ["PYTHONUSERBASE"] = base
    log_installed(time.time() - started)
    return 0


def model_dir_problem():
    # AIP_MODEL_DIR is written by the module at its end: check it now, as the replica's user, by
    # making and removing a directory in it. A gs:// value maps under TRAINYARD_BUCKET_ROOT (unset:
    # the module writes through the Storage API, nothing to check here).
    uri = os.environ.get("AIP_MODEL_DIR", "")
    root = os.environ.get("TRAINYARD_BUCKET_ROOT", "")
    if not uri or (uri.startswith("gs://") and not root):
        return None
    path = os.path.join(root, uri[len("gs://"):]) if uri.startswith("gs://") else uri
    try:
        os.makedirs(path, exist_ok=True)
        os.rmdir(tempfile.mkdtemp(prefix=".trainyard-write-check-", dir=path))
        return None
    except OSError as e:
        culprit = path
        while not os.path.isdir(culprit) and os.path.dirname(culprit) != culprit:
            culprit = os.path.dirname(culprit)
        try:
            st = os.stat(culprit)
            owner = "owned by uid %d, gid %d, mode %04o" % (st.st_uid, st.st_gid, st.st_mode & 0o7777)
        except OSError:
            owner = "not readable"
        return ("AIP_MODEL_DIR %s: cannot write %s (%s); %s is %s, and this replica runs as uid %d "
                "(gid %d, groups %s). Fix: let uid %d write %s (chown it, or chgrp a group it has "
                "and chmod g+ws), or use another baseOutputDirectory"
                % (uri, path, e.strerror, culprit, owner, os.geteuid(), os.getegid(),
                   ",".join(str(g) for g in os.getgroups()) or "none", os.geteuid(), culprit))


def main():
    n = int(sys.argv[1])
    packages, module, args = sys.argv[2:2 + n], sys.argv[2 + n], sys.argv[3 + n:]
    problem = model_dir_problem()
    if problem:
        say(problem)
        return 78  # EX_CONFIG (replica_contract::kExitConfig): not restarted
    if importlib.util.find_spec("pip") is not None:
        code = install(packages)
        if code != 0:
            return code
    else:
        archives = [p for p in packages if not p.endswith(".whl")]
        if archives:
            say("pythonPackageSpec.packageUris: %s is a source archive, which is installed with "
                "pip, but this python (%s) has no pip: install pip in the image (Debian: "
                "python3-pip), or give the package as a directory, .zip or .whl"
                % (archives[0], sys.executable))
            return 2
        say("this python (%s) has no pip: the wheels go on PYTHONPATH, without their "
            "dependencies" % sys.executable)
        path = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(packages + ([path] if path else []))
    os.execv(sys.executable, [sys.executable, "-m", module] + args)


sys.exit(main())
)PY";
  return source;
}

std::vector<std::string> PythonPackageLauncherArgv(const std::vector<std::string>& python,
                                                   const std::vector<std::string>& packages,
                                                   const std::string& module) {
  std::vector<std::string> argv = python;
  argv.push_back("-c");
  argv.push_back(PythonPackageLauncherSource());
  argv.push_back(std::to_string(packages.size()));
  argv.insert(argv.end(), packages.begin(), packages.end());
  argv.push_back(module);
  return argv;
}

}  // namespace trainyard::spec
