#include "container/image_reference.h"

#include <gtest/gtest.h>

namespace trainyard::container {
namespace {

// "domain|path|tag|digest" for a parsed reference, or "ERROR: message".
std::string Parsed(std::string_view text) {
  auto ref = ParseImageReference(text);
  if (!ref.ok()) return "ERROR: " + ref.status().message();
  return ref->domain + "|" + ref->path + "|" + ref->tag + "|" + ref->digest;
}

std::string Resolved(std::string_view uri, std::string registry = "127.0.0.1:5000") {
  ImageResolver resolver(DefaultImageRewriteRules(), registry);
  auto r = resolver.Resolve(uri);
  return r.ok() ? r->image : r.status().ToString();
}

const std::string kDigest = "sha256:" + std::string(64, 'a');

TEST(ImageReferenceTest, ParsesTheDockerGrammar) {
  std::string out;
  for (const std::string& text : std::vector<std::string>{
           "busybox", "trainyard/bert-sentiment:latest",
           "eu.gcr.io/my-project/pt_bert_sentiment:dev", "127.0.0.1:5000/a/b:1.0",
           "localhost/probe", "us-docker.pkg.dev/p/r/img@" + kDigest, "a__b/c-d.e:V_1-x"}) {
    out += Parsed(text) + "\n";
  }
  EXPECT_EQ(out,
            "|busybox||\n"
            "|trainyard/bert-sentiment|latest|\n"
            "eu.gcr.io|my-project/pt_bert_sentiment|dev|\n"
            "127.0.0.1:5000|a/b|1.0|\n"
            "localhost|probe||\n"
            "us-docker.pkg.dev|p/r/img||" +
                kDigest +
                "\n"
                "|a__b/c-d.e|V_1-x|\n");
}

TEST(ImageReferenceTest, RoundTripsThroughToString) {
  for (const std::string& text :
       std::vector<std::string>{"eu.gcr.io/p/x:dev", "127.0.0.1:5000/a/b@" + kDigest, "busybox"}) {
    auto ref = ParseImageReference(text);
    ASSERT_TRUE(ref.ok()) << ref.status();
    EXPECT_EQ(ref->ToString(), text);
  }
}

TEST(ImageReferenceTest, MalformedReferencesNameTheFieldAndTheProblem) {
  std::string out;
  for (const std::string& text : std::vector<std::string>{
           "", "Eu.gcr.io/p/X:dev", "gs://bucket/image", "img:", "a//b", "img:-bad",
           "img@sha256:abc", "bad host!/x", "with space", std::string(300, 'a')}) {
    auto ref = ParseImageReference(text);
    out += (ref.ok() ? "OK" : ref.status().message().substr(0, ref.status().message().find(';'))) +
           "\n";
  }
  EXPECT_EQ(out,
            "containerSpec.imageUri: '' is not a valid image reference: it is empty\n"
            "containerSpec.imageUri: 'Eu.gcr.io/p/X:dev' is not a valid image reference: name "
            "component 'X' must be lowercase letters and digits separated by '.', '_', '__' or "
            "'-'\n"
            "containerSpec.imageUri: 'gs://bucket/image' is not a valid image reference: a URL "
            "scheme is not part of an image reference\n"
            "containerSpec.imageUri: 'img:' is not a valid image reference: tag '' must be 1-128 "
            "of [A-Za-z0-9_.-], not starting with . or -\n"
            "containerSpec.imageUri: 'a//b' is not a valid image reference: name component '' "
            "must be lowercase letters and digits separated by '.', '_', '__' or '-'\n"
            "containerSpec.imageUri: 'img:-bad' is not a valid image reference: tag '-bad' must "
            "be 1-128 of [A-Za-z0-9_.-], not starting with . or -\n"
            "containerSpec.imageUri: 'img@sha256:abc' is not a valid image reference: a sha256 "
            "digest has 64 hex digits\n"
            "containerSpec.imageUri: 'bad host!/x' is not a valid image reference: it contains "
            "whitespace or control characters\n"
            "containerSpec.imageUri: 'with space' is not a valid image reference: it contains "
            "whitespace or control characters\n"
            "containerSpec.imageUri: '" +
                std::string(300, 'a') +
                "' is not a valid image reference: the name is longer than 255 characters\n");
}

TEST(ImageReferenceTest, ErrorsNameTheFieldTheCallerGives) {
  auto ref = ParseImageReference("UPPER", "pythonPackageSpec.executorImageUri");
  EXPECT_EQ(ref.status().message().substr(0, 36), "pythonPackageSpec.executorImageUri: ");
}

TEST(ImageReferenceTest, QualifiedReferenceMakesDockerDefaultsExplicit) {
  std::string out;
  for (const std::string& text :
       std::vector<std::string>{"busybox", "user/img", "localhost/probe", "eu.gcr.io/p/x:dev",
                                "127.0.0.1:5000/a@" + kDigest}) {
    out += QualifiedReference(*ParseImageReference(text)) + "\n";
  }
  EXPECT_EQ(out,
            "docker.io/library/busybox:latest\n"
            "docker.io/user/img:latest\n"
            "localhost/probe:latest\n"
            "eu.gcr.io/p/x:dev\n"
            "127.0.0.1:5000/a@" +
                kDigest + "\n");
}

TEST(ImageResolverTest, DefaultRulesMapCloudNamesToTheRegistry) {
  std::string out;
  for (const std::string& uri : std::vector<std::string>{
           "eu.gcr.io/my-project/pt_bert_sentiment:dev", "gcr.io/my-project/team/trainer",
           "us.gcr.io/p/x:1", "europe-west4-docker.pkg.dev/my-project/my-repo/trainer:v2",
           "us-docker.pkg.dev/p/r/img@" + kDigest,
           "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.1-13.py310:latest",
           "europe-docker.pkg.dev/vertex-ai/training/pytorch-xla.2-1.py310:latest",
           "gcr.io/cloud-aiplatform/training/pytorch-cpu.1-9:latest", "trainyard/bert-sentiment",
           "quay.io/org/img:3", "busybox"}) {
    out += Resolved(uri) + "\n";
  }
  EXPECT_EQ(out,
            "127.0.0.1:5000/pt_bert_sentiment:dev\n"
            "127.0.0.1:5000/team/trainer:latest\n"
            "127.0.0.1:5000/x:1\n"
            "127.0.0.1:5000/trainer:v2\n"
            "127.0.0.1:5000/img@" +
                kDigest +
                "\n"
                "127.0.0.1:5000/trainyard/pytorch:latest\n"
                "127.0.0.1:5000/trainyard/pytorch:latest\n"
                "127.0.0.1:5000/trainyard/pytorch:latest\n"
                "127.0.0.1:5000/trainyard/bert-sentiment:latest\n"
                "quay.io/org/img:3\n"
                "docker.io/library/busybox:latest\n");
}

TEST(ImageResolverTest, RecordsTheRuleThatMatched) {
  ImageResolver resolver(DefaultImageRewriteRules(), "reg.example.com/team/");
  auto r = resolver.Resolve("eu.gcr.io/p/img:1");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->requested + " | " + r->image + " | " + r->rule,
            "eu.gcr.io/p/img:1 | reg.example.com/team/img:1 | *.gcr.io/*/... -> REGISTRY/...");
}

TEST(ImageResolverTest, NoRegistryConfiguredFailsWithTheFix) {
  EXPECT_EQ(Resolved("eu.gcr.io/p/img:1", ""),
            "FAILED_PRECONDITION: containerSpec.imageUri: image 'eu.gcr.io/p/img:1' maps to a "
            "local registry by rule '*.gcr.io/*/... -> REGISTRY/...' but no registry is "
            "configured; start one (scripts/registry-local.sh start) and set TRAINYARD_REGISTRY "
            "(e.g. 127.0.0.1:5000), or name an image in a reachable registry");
}

TEST(ImageResolverTest, MalformedUriIsInvalidArgument) {
  EXPECT_EQ(Resolved("eu.gcr.io/P/img").substr(0, 40), "INVALID_ARGUMENT: containerSpec.imageUri");
}

TEST(ImageRewriteRulesTest, ParsesAFileWithComments) {
  auto rules = ParseImageRewriteRules(
      "# site rules\n"
      "\n"
      "eu.gcr.io/*/...   registry.lan:5000/...   # everything from eu.gcr.io\n"
      "docker.io/library/*  registry.lan:5000/mirror/base:1\n",
      "rewrites.conf");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ImageResolver resolver(*rules, "");
  std::string out = resolver.Resolve("eu.gcr.io/p/a/b:c")->image + "\n" +
                    resolver.Resolve("busybox")->image + "\n" +
                    resolver.Resolve("docker.io/user/x")->image;
  EXPECT_EQ(out,
            "registry.lan:5000/a/b:c\n"
            "registry.lan:5000/mirror/base:1\n"
            "docker.io/user/x:latest");
}

TEST(ImageRewriteRulesTest, BadLinesAreRejectedWithFileAndLine) {
  std::string out;
  for (const std::string& text : std::vector<std::string>{"only-one-field\n", "a/.../b  x\n",
                                                          "a/*  REGISTRY/...\n", "x y z\n"}) {
    out += ParseImageRewriteRules("# c\n" + text, "rw.conf").status().message() + "\n";
  }
  EXPECT_EQ(out,
            "rw.conf:2: expected 'PATTERN REPLACEMENT', got 1 fields\n"
            "rw.conf:2: '...' may only end a pattern, after '/': a/.../b\n"
            "rw.conf:2: replacement uses '...' but pattern 'a/*' does not end in '/...'\n"
            "rw.conf:2: expected 'PATTERN REPLACEMENT', got 3 fields\n");
}

}  // namespace
}  // namespace trainyard::container
