// The pip launcher run by a real python: a source archive and a wheel, both made here, installed
// with the python's own pip into a fresh user base under the working directory, then the module
// run with its arguments; a failed install; a python without pip. Skipped, with the reason, where
// no python3 with pip, setuptools and wheel is installed (scripts/install-deps.sh --test installs
// Debian's).
#include "spec/python_package_launcher.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "testing/test_util.h"

namespace trainyard::spec {
namespace {

namespace fs = std::filesystem;

// Writes dist/trainer-0.1.tar.gz (setup.py + trainer/task.py, which prints its arguments, where
// it was imported from and helper.VALUE) and dist/helper-1.0-py3-none-any.whl (helper/__init__.py
// and helper/main.py) with python's tarfile and zipfile.
constexpr const char* kMakePackages = R"PY(
import io, os, sys, tarfile, zipfile
dist = sys.argv[1]
os.makedirs(dist)
files = {
    "trainer-0.1/setup.py": "from setuptools import setup\n"
                            "setup(name='trainer', version='0.1', packages=['trainer'])\n",
    "trainer-0.1/PKG-INFO": "Metadata-Version: 2.1\nName: trainer\nVersion: 0.1\n",
    "trainer-0.1/trainer/__init__.py": "",
    "trainer-0.1/trainer/task.py":
        "import sys, helper, trainer\n"
        "print('task args=%s helper=%s from=%s' % (sys.argv[1:], helper.VALUE, trainer.__file__))\n",
}
with tarfile.open(os.path.join(dist, "trainer-0.1.tar.gz"), "w:gz") as tar:
    for name, text in files.items():
        data = text.encode()
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
wheel = {
    "helper/__init__.py": "VALUE = 42\n",
    "helper/main.py": "import sys, helper\nprint('helper main args=%s value=%s' % "
                      "(sys.argv[1:], helper.VALUE))\n",
    "helper-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: helper\nVersion: 1.0\n",
    "helper-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                  "Tag: py3-none-any\n",
}
wheel["helper-1.0.dist-info/RECORD"] = "".join(n + ",,\n" for n in wheel) + \
    "helper-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(os.path.join(dist, "helper-1.0-py3-none-any.whl"), "w") as z:
    for name, text in wheel.items():
        z.writestr(name, text)
)PY";

constexpr const char* kHasPipSetuptoolsAndWheel =
    "import importlib.util, sys\n"
    "sys.exit(not all(importlib.util.find_spec(m) for m in ('pip', 'setuptools', 'wheel')))";

class PythonPackageLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* candidate : {"/usr/bin/python3", "python3"}) {
      if (testing::RunProcess({candidate, "-c", kHasPipSetuptoolsAndWheel}).exit_code == 0) {
        python_ = candidate;
        break;
      }
    }
    if (python_.empty()) {
      GTEST_SKIP() << "no python3 with pip, setuptools and wheel (Debian: apt-get install "
                      "python3-pip)";
    }
    dir_ = testing::MakeTestDir();
    fs::create_directories(dir_ / "work");
    auto made = testing::RunProcess({python_, "-c", kMakePackages, (dir_ / "dist").string()});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    sdist_ = (dir_ / "dist/trainer-0.1.tar.gz").string();
    wheel_ = (dir_ / "dist/helper-1.0-py3-none-any.whl").string();
  }

  // Runs the launcher as a replica would: in its working directory, `python ARGV`.
  testing::ProcessResult Launch(std::vector<std::string> python,
                                const std::vector<std::string>& packages, const std::string& module,
                                const std::vector<std::string>& args,
                                const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {"sh", "-c", "cd \"$0\" && exec \"$@\"",
                                     (dir_ / "work").string()};
    for (const std::string& a : PythonPackageLauncherArgv(python, packages, module)) {
      argv.push_back(a);
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::RunProcess(argv, "", env);
  }

  std::string python_;
  fs::path dir_;
  std::string sdist_, wheel_;
};

TEST_F(PythonPackageLauncherTest, InstallsTheArchiveAndWheelThenRunsTheModuleWithItsArguments) {
  auto r = Launch({python_}, {sdist_, wheel_}, "trainer.task", {"--lr=0.5", "two words"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "[trainyard] pip install " + sdist_ + " " + wheel_)
      << r.out << r.err;
  const std::string want =
      "task args=['--lr=0.5', 'two words'] helper=42 from=" + (dir_ / "work").string() +
      "/.trainyard-python-";
  // pip's own lines come first (they go to the job log too); the module's line is last.
  const std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  EXPECT_EQ(last.substr(0, want.size()), want) << r.out << r.err;
  EXPECT_NE(r.out.find("Successfully installed helper-1.0 trainer-0.1"), std::string::npos)
      << r.out;
}

TEST_F(PythonPackageLauncherTest, AFailedInstallEndsWithPipsExitCodeAndSaysSo) {
  auto r = Launch({python_}, {(dir_ / "dist/missing-1.0.tar.gz").string()}, "trainer.task", {});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("[trainyard] pip install failed with exit code 1"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("task args"), std::string::npos) << r.out;
}

// Seed 002's situation: the package needs what the image lacks and no index is reachable.
constexpr const char* kMakeNeedyPackage = R"PY(
import io, sys, tarfile
files = {
    "needy-1.0/setup.py": "from setuptools import setup\n"
                          "setup(name='needy', version='1.0',\n"
                          "      install_requires=['surely-absent-xyz>=1', 'other-absent'])\n",
    "needy-1.0/PKG-INFO": "Metadata-Version: 2.1\nName: needy\nVersion: 1.0\n",
    "needy-1.0/needy.egg-info/requires.txt": "surely-absent-xyz>=1\nother-absent\n\n[dev]\npytest\n",
}
with tarfile.open(sys.argv[1], "w:gz") as tar:
    for name, text in files.items():
        info = tarfile.TarInfo(name)
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text.encode()))
)PY";

TEST_F(PythonPackageLauncherTest, MissingDependenciesWithoutAnIndexAreNamedWithTheFix) {
  const std::string needy = (dir_ / "dist/needy-1.0.tar.gz").string();
  auto made = testing::RunProcess({python_, "-c", kMakeNeedyPackage, needy});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto r = Launch({python_}, {needy}, "needy", {},
                  {"PIP_INDEX_URL=http://127.0.0.1:9/simple", "PIP_RETRIES=0", "PIP_TIMEOUT=2"});
  EXPECT_EQ(r.exit_code, 78) << r.out << r.err;  // not restarted
  EXPECT_NE(r.err.find("[trainyard] pip could not reach the package index "
                       "http://127.0.0.1:9/simple"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("[trainyard] the packages need surely-absent-xyz, other-absent, which this "
                       "image's python"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("make a package index reachable from the replicas (PIP_INDEX_URL)"),
            std::string::npos)
      << r.err;
}

// A wheelhouse instead of an index (PIP_NO_INDEX + PIP_FIND_LINKS, as an offline host is set up):
// the archive's install_requires come from it, and the log names what was installed, with
// versions; a requirement the wheelhouse lacks ends the replica at once with 78, naming it and
// where pip looked.
TEST_F(PythonPackageLauncherTest, DependenciesComeFromTheWheelhouseAndAreLoggedWithVersions) {
  const fs::path pkg = dir_ / "src" / "needs-helper";
  testing::WriteFileOrDie(pkg / "setup.py",
                          "from setuptools import setup\n"
                          "setup(name='needs-helper', version='2.0', py_modules=['needs'],\n"
                          "      install_requires=['helper==1.0'])\n");
  testing::WriteFileOrDie(pkg / "needs.py", "import helper\nprint('needs', helper.VALUE)\n");
  const std::string wheelhouse = (dir_ / "dist").string();
  const std::vector<std::string> offline = {"PIP_NO_INDEX=1", "PIP_FIND_LINKS=" + wheelhouse};
  auto sdist =
      testing::RunProcess({"sh", "-c", "cd \"$0\" && \"$1\" setup.py -q sdist -d \"$2\" 2>&1",
                           pkg.string(), python_, (dir_ / "sdist").string()});
  ASSERT_EQ(sdist.exit_code, 0) << sdist.out;
  const std::string archive = (dir_ / "sdist" / "needs-helper-2.0.tar.gz").string();
  ASSERT_TRUE(fs::exists(archive)) << sdist.out;
  auto r = Launch({python_}, {archive}, "needs", {}, offline);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(
      r.out,
      std::regex(
          R"(\[trainyard\] installed in [0-9]+\.[0-9] s: helper==1\.0, needs-helper==2\.0\n)")))
      << r.out;
  EXPECT_TRUE(r.out.ends_with("needs 42\n")) << r.out;

  testing::WriteFileOrDie(pkg / "setup.py",
                          "from setuptools import setup\n"
                          "setup(name='needs-helper', version='2.0', py_modules=['needs'],\n"
                          "      install_requires=['helper==1.0', 'surely-absent-xyz>=1'])\n");
  fs::remove_all(dir_ / "sdist");
  sdist = testing::RunProcess({"sh", "-c", "cd \"$0\" && \"$1\" setup.py -q sdist -d \"$2\" 2>&1",
                               pkg.string(), python_, (dir_ / "sdist").string()});
  ASSERT_EQ(sdist.exit_code, 0) << sdist.out;
  auto missing = Launch({python_}, {archive}, "needs", {}, offline);
  EXPECT_EQ(missing.exit_code, 78) << missing.out << missing.err;
  EXPECT_NE(missing.err.find("[trainyard] surely-absent-xyz>=1 was not found on the wheelhouse " +
                             wheelhouse + ": check its name and version"),
            std::string::npos)
      << missing.err;
  EXPECT_NE(missing.err.find("[trainyard] not restarted"), std::string::npos) << missing.err;
  EXPECT_EQ(missing.out.find("needs 42"), std::string::npos) << missing.out;
}

// AIP_MODEL_DIR is made (gs:// under TRAINYARD_BUCKET_ROOT) and written to before anything else;
// one that cannot be written ends the replica with exit 78 and the reason, before pip runs.
TEST_F(PythonPackageLauncherTest, AModelDirItCannotWriteEndsWith78BeforeTheInstall) {
  const std::string root = "TRAINYARD_BUCKET_ROOT=" + (dir_ / "buckets").string();
  auto ok = Launch({python_, "-S"}, {wheel_}, "helper.main", {}, {root, "AIP_MODEL_DIR=gs://b/m/"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_TRUE(fs::is_directory(dir_ / "buckets/b/m") && fs::is_empty(dir_ / "buckets/b/m"));
  // Even root cannot make a directory below a file.
  testing::WriteFileOrDie(dir_ / "buckets/b/file", "x");
  auto blocked =
      Launch({python_}, {sdist_}, "trainer.task", {}, {root, "AIP_MODEL_DIR=gs://b/file/m/"});
  EXPECT_EQ(blocked.exit_code, 78) << blocked.out << blocked.err;
  const std::string path = (dir_ / "buckets/b/file/m/").string();
  EXPECT_TRUE(blocked.err.starts_with("[trainyard] AIP_MODEL_DIR gs://b/file/m/: cannot write " +
                                      path + " (Not a directory); "))
      << blocked.err;
  EXPECT_NE(blocked.err.find("Fix: let uid "), std::string::npos) << blocked.err;
  EXPECT_EQ(blocked.out, "") << "pip must not have run";
}

// `python -S` has no site-packages, so no pip: the wheel goes on PYTHONPATH; an archive cannot.
TEST_F(PythonPackageLauncherTest, WithoutPipWheelsGoOnThePathAndArchivesAreRefused) {
  auto wheel_only = Launch({python_, "-S"}, {wheel_}, "helper.main", {"--x=1"});
  EXPECT_EQ(wheel_only.exit_code, 0) << wheel_only.out << wheel_only.err;
  EXPECT_EQ(wheel_only.out, "helper main args=['--x=1'] value=42\n") << wheel_only.err;
  EXPECT_NE(wheel_only.err.find("has no pip: the wheels go on PYTHONPATH, without their "
                                "dependencies"),
            std::string::npos)
      << wheel_only.err;

  auto archive = Launch({python_, "-S"}, {wheel_, sdist_}, "trainer.task", {});
  EXPECT_EQ(archive.exit_code, 2) << archive.out << archive.err;
  EXPECT_NE(archive.err.find("pythonPackageSpec.packageUris: " + sdist_ +
                             " is a source archive, which is installed with pip, but this python"),
            std::string::npos)
      << archive.err;
  EXPECT_NE(archive.err.find("install pip in the image (Debian: python3-pip)"), std::string::npos)
      << archive.err;
}

}  // namespace
}  // namespace trainyard::spec
