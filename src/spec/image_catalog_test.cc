#include "spec/image_catalog.h"

#include <gtest/gtest.h>

#include "spec/python_package_launcher.h"
#include "testing/test_util.h"

namespace trainyard::spec {
namespace {

WorkerPoolSpec Pool(const std::string& image, std::vector<std::string> command,
                    std::vector<std::string> args) {
  WorkerPoolSpec p;
  p.container_spec = ContainerSpec{image, std::move(command), std::move(args), {}};
  return p;
}

std::string Argv(const StatusOr<ResolvedCommand>& r) {
  if (!r.ok()) return r.status().message();
  std::string s;
  for (const auto& a : r->argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

TEST(ImageCatalogTest, BuiltInTrainerAndLocal) {
  auto c = ImageCatalog::BuiltIn();
  EXPECT_EQ(Argv(c.Resolve(Pool("trainyard/bert-sentiment:v1", {}, {"--epochs=1"}), "p")),
            "trainyard-bert train --epochs=1");
  EXPECT_EQ(Argv(c.Resolve(Pool("local", {"echo", "hi"}, {"x"}), "p")), "echo hi x");
  EXPECT_EQ(Argv(c.Resolve(Pool("local", {}, {}), "p")).substr(0, 24), "p.containerSpec.command:");
}

TEST(ImageCatalogTest, AnImageNotInTheCatalogIsRunAsAContainer) {
  auto c = ImageCatalog::BuiltIn();
  auto own = c.Resolve(Pool("eu.gcr.io/p/img:dev", {"sh", "-c"}, {"echo hi"}), "p");
  auto plain = c.Resolve(Pool("eu.gcr.io/p/img:dev", {}, {}), "p");
  ASSERT_TRUE(own.ok() && plain.ok());
  EXPECT_EQ(own->image + " " + own->image_field + " " + (*own->command)[1] + " " + (*own->args)[0] +
                " argv=" + std::to_string(own->argv.size()) +
                " plain:" + std::to_string(plain->command.has_value() || plain->args.has_value()),
            "eu.gcr.io/p/img:dev containerSpec.imageUri -c echo hi argv=0 plain:0");
}

TEST(ImageCatalogTest, UserFileWithWildcardsWinsAndCommandOverridesEntrypoint) {
  auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "images.yaml", R"(images:
  - uri: eu.gcr.io/*/pt_bert_sentiment:*
    command: [python3, main.py]
    env: {MODE: gpu}
)");
  auto c = ImageCatalog::LoadFile(dir / "images.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  auto r = c->Resolve(Pool("eu.gcr.io/proj/pt_bert_sentiment:dev", {}, {"--epochs=10"}), "p");
  EXPECT_EQ(Argv(r) + " MODE=" + r->env["MODE"], "python3 main.py --epochs=10 MODE=gpu");
  EXPECT_EQ(Argv(c->Resolve(Pool("eu.gcr.io/proj/pt_bert_sentiment:dev", {"bash"}, {"-c"}), "p")),
            "bash -c");
}

TEST(ImageCatalogTest, RejectsUnknownKeysInFile) {
  auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "images.yaml", "images:\n  - uri: a\n    comand: [b]\n");
  EXPECT_NE(ImageCatalog::LoadFile(dir / "images.yaml")
                .status()
                .message()
                .find("images[0]: unknown key 'comand'"),
            std::string::npos);
}

TEST(ImageCatalogTest, PythonPackageRunsModuleWithPythonPath) {
  WorkerPoolSpec p;
  p.python_package_spec =
      PythonPackageSpec{"us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-2:latest",
                        {"/pkgs/trainer"},
                        "trainer.task",
                        {"--lr=1"},
                        {}};
  auto r = ImageCatalog::BuiltIn().Resolve(p, "p");
  EXPECT_EQ(Argv(r) + " PYTHONPATH=" + r->env["PYTHONPATH"],
            "python3 -m trainer.task --lr=1 PYTHONPATH=/pkgs/trainer");
}

TEST(ImageCatalogTest, PythonPackageInTheUsersImageRunsThereWithPackagesAsItSeesThem) {
  WorkerPoolSpec p;
  p.python_package_spec = PythonPackageSpec{"eu.gcr.io/proj/executor:v1",
                                            {"gs://bkt/pkgs/trainer.zip", "/pkgs/extra"},
                                            "trainer.task",
                                            {"--lr=1"},
                                            {}};
  auto r = ImageCatalog::BuiltIn().Resolve(p, "p");
  ASSERT_TRUE(r.ok()) << r.status();
  std::string command;
  for (const auto& a : *r->command) command += a + " ";
  EXPECT_EQ(r->image + " | " + r->image_field + " | " + command + (*r->args)[0] +
                " | PYTHONPATH=" + r->env["PYTHONPATH"] + " | mounts=" + r->mounts.at(0) +
                " argv=" + std::to_string(r->argv.size()),
            "eu.gcr.io/proj/executor:v1 | pythonPackageSpec.executorImageUri | python3 -m "
            "trainer.task --lr=1 | PYTHONPATH=/gcs/bkt/pkgs/trainer.zip:/pkgs/extra | "
            "mounts=/pkgs/extra argv=0");
}

// Source archives and wheels are pip-installed by the launcher in the replica, as Vertex installs
// packageUris; directories and .zip stay on PYTHONPATH. Host command and container alike.
TEST(ImageCatalogTest, ArchivesAndWheelsGoThroughThePipLauncher) {
  WorkerPoolSpec p;
  p.python_package_spec =
      PythonPackageSpec{"eu.gcr.io/proj/executor:v1",
                        {"gs://bkt/dist/trainer-0.1.tar.gz", "/pkgs/dep-1.0-py3-none-any.whl",
                         "/pkgs/extra", "gs://bkt/dist/old.tgz"},
                        "trainer.task",
                        {"--lr=1"},
                        {}};
  auto r = ImageCatalog::BuiltIn().Resolve(p, "p");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->command.has_value());
  const std::vector<std::string>& c = *r->command;
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c[0] + " " + c[1] + " | " + c[3] + " " + c[4] + " " + c[5] + " " + c[6] + " " + c[7] +
                " | args=" + r->args->at(0) + " | PYTHONPATH=" + r->env["PYTHONPATH"] +
                " | mounts=" + r->mounts.at(0) + "," + r->mounts.at(1),
            "python3 -c | 3 /gcs/bkt/dist/trainer-0.1.tar.gz /pkgs/dep-1.0-py3-none-any.whl "
            "/gcs/bkt/dist/old.tgz trainer.task | args=--lr=1 | PYTHONPATH=/pkgs/extra | "
            "mounts=/pkgs/dep-1.0-py3-none-any.whl,/pkgs/extra");
  EXPECT_EQ(c[2], PythonPackageLauncherSource());

  auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "images.yaml",
                          "images:\n  - uri: 'eu.gcr.io/proj/executor:*'\n"
                          "    command: [/opt/py/bin/python, -u]\n");
  auto host = ImageCatalog::LoadFile(dir / "images.yaml");
  ASSERT_TRUE(host.ok()) << host.status();
  p.python_package_spec->package_uris = {"/pkgs/trainer-0.1.tar.gz"};
  r = host->Resolve(p, "p");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->argv.size(), 8u);
  EXPECT_EQ(r->argv[0] + " " + r->argv[1] + " " + r->argv[2] + " | " + r->argv[4] + " " +
                r->argv[5] + " " + r->argv[6] + " " + r->argv[7] + " | image=" + r->image +
                " PYTHONPATH set=" + std::to_string(r->env.count("PYTHONPATH")),
            "/opt/py/bin/python -u -c | 1 /pkgs/trainer-0.1.tar.gz trainer.task --lr=1 | image= "
            "PYTHONPATH set=0");
}

// With containers, Vertex's prebuilt PyTorch names stay images (the rewrite table sends them to
// trainyard/pytorch); its other prebuilt images, which Trainyard has no image for, stay host
// python3; a user's catalog entry still wins over both.
TEST(ImageCatalogTest, WithContainersVertexPytorchNamesRunAsTheirImage) {
  const std::string gpu = "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.1-13.py310:latest";
  const std::string legacy = "gcr.io/cloud-aiplatform/training/pytorch-cpu.1-9";
  const std::string tf = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-12.py310:latest";
  auto containers = ImageCatalog::BuiltIn(PrebuiltImages::kContainer);
  auto host = ImageCatalog::BuiltIn(PrebuiltImages::kHost);
  EXPECT_EQ(containers.Find(gpu), nullptr);
  EXPECT_EQ(containers.Find(legacy), nullptr);
  ASSERT_NE(containers.Find(tf), nullptr);
  EXPECT_EQ(containers.Find(tf)->command, std::vector<std::string>{"python3"});
  ASSERT_NE(host.Find(gpu), nullptr);
  EXPECT_EQ(host.Find(gpu)->command, std::vector<std::string>{"python3"});

  WorkerPoolSpec p;
  p.python_package_spec = PythonPackageSpec{gpu, {"gs://bkt/trainer"}, "trainer.task", {}, {}};
  auto r = containers.Resolve(p, "p");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->image + " PYTHONPATH=" + r->env["PYTHONPATH"], gpu + " PYTHONPATH=/gcs/bkt/trainer");

  auto dir = testing::MakeTestDir();
  testing::WriteFileOrDie(dir / "images.yaml",
                          "images:\n  - uri: '*/training/pytorch-gpu.*'\n    command: [py]\n");
  auto user = ImageCatalog::LoadFile(dir / "images.yaml", PrebuiltImages::kContainer);
  ASSERT_TRUE(user.ok()) << user.status();
  ASSERT_NE(user->Find(gpu), nullptr);
  EXPECT_EQ(user->Find(gpu)->command, std::vector<std::string>{"py"});
  EXPECT_EQ(user->Find(legacy), nullptr);
}

}  // namespace
}  // namespace trainyard::spec
