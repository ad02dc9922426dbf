// trainyard-bert batch-predict: one replica's share of a batch prediction job
// (batch_prediction/shard_runner.h) with an exported (or HF) classifier loaded in-process: the
// native runtime of `batchPredictionJobs` (controller/batch_prediction_controller.h), also run by
// hand. With --model-pool it instead feeds every instance to a model's own serving containers,
// the replicas of that worker pool (batch_prediction/http_predictor.h). Inputs and outputs are
// gs:// URIs (mapped through TRAINYARD_BUCKET_ROOT, never following a link in a bucket) or local
// paths. The shard is this replica's place in its worker pool (CLUSTER_SPEC's task index of the
// pool's size) unless --shard/--shards say otherwise.
#include "command_registry.h"

#if defined(TRAINYARD_HAVE_TRAINER)

#include <fnmatch.h>
#include <sys/stat.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "batch_prediction/http_predictor.h"
#include "batch_prediction/shard_runner.h"
#include "common/beneath.h"
#include "common/bucket_path.h"
#include "common/file_util.h"
#include "common/json_parse.h"
#include "model/cpu_runtime.h"
#include "replica_contract/replica_contract.h"
#include "serving/prediction_codec.h"
#include "spec/batch_prediction_job.h"
#include "train/predictor.h"

namespace trainyard::tools {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr size_t kMaxInputBytes = size_t{4} << 30;

struct BatchFlags {
  std::string model_dir;
  std::vector<std::string> inputs;
  std::string format = "jsonl";
  std::string instance_config = "{}";
  std::string parameters;
  std::string output_dir;
  std::string progress_dir;
  int shard = -1, shards = -1;
  int batch_size = spec::kDefaultBatchSize;
  int max_length = 100;
  int threads = 0;
  // A model in its own serving containers: the replicas of this worker pool (CLUSTER_SPEC).
  int model_pool = -1;
  std::string predict_route = "/predict";
  std::string health_route = "/health";
  int health_timeout_s = 600;
};

int FailBatch(const Status& s) { return ReportFailure("trainyard-bert batch-predict: ", s); }

// Reads a gs:// object beneath the bucket root (links refused) or a local file.
StatusOr<std::string> ReadInput(const std::string& uri) {
  if (!IsGcsUri(uri)) return ReadFile(uri);
  TY_ASSIGN_OR_RETURN(GcsUri gcs, ParseGcsUri(uri));
  TY_ASSIGN_OR_RETURN(BeneathDir root, BeneathDir::Open(BucketRoot()));
  StatusOr<std::string> content = root.ReadFile(gcs.bucket + "/" + gcs.object, kMaxInputBytes);
  if (!content.ok()) {
    return Status(content.status().code(), uri + ": " + WithGcsUris(content.status().message()));
  }
  return content;
}

// Every object under gs://BUCKET/<dir> (recursively, links skipped), as object names.
Status ListObjects(const BeneathDir& root, const std::string& rel, std::vector<std::string>* out) {
  StatusOr<std::vector<BeneathDir::Entry>> entries = root.List(rel);
  if (!entries.ok()) {
    return entries.status().code() == StatusCode::kNotFound ? Status::Ok() : entries.status();
  }
  for (const BeneathDir::Entry& e : *entries) {
    const std::string child = rel + "/" + e.name;
    if (e.type == S_IFDIR) {
      TY_RETURN_IF_ERROR(ListObjects(root, child, out));
    } else if (e.type == S_IFREG) {
      out->push_back(child);
    }
  }
  return Status::Ok();
}

// The URIs a gcsSource URI names: itself, or with '*' the objects matching it, sorted.
StatusOr<std::vector<std::string>> Expand(const std::string& uri, size_t i) {
  if (uri.find('*') == std::string::npos) return std::vector<std::string>{uri};
  TY_ASSIGN_OR_RETURN(GcsUri gcs, ParseGcsUri(uri));  // '*' is a valid object character
  const std::string fixed = gcs.object.substr(0, gcs.object.find('*'));
  const std::string dir =
      fixed.substr(0, fixed.rfind('/') == std::string::npos ? 0 : fixed.rfind('/'));
  TY_ASSIGN_OR_RETURN(BeneathDir root, BeneathDir::Open(BucketRoot()));
  std::vector<std::string> objects;
  TY_RETURN_IF_ERROR(ListObjects(root, gcs.bucket + (dir.empty() ? "" : "/" + dir), &objects));
  std::vector<std::string> out;
  const std::string pattern = gcs.bucket + "/" + gcs.object;
  for (const std::string& o : objects) {
    if (::fnmatch(pattern.c_str(), o.c_str(), 0) == 0) out.push_back("gs://" + o);
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) {
    return NotFoundError("inputConfig.gcsSource.uris[" + std::to_string(i) + "]: " + uri +
                         " matches no object");
  }
  return out;
}

// --shard/--shards, else this replica's place in its pool.
Status PickShard(BatchFlags& o) {
  if (o.shard >= 0 || o.shards >= 0) {
    if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards) {
      return InvalidArgumentError("--shard must be 0 to --shards - 1, and --shards >= 1");
    }
    return Status::Ok();
  }
  o.shard = 0;
  o.shards = 1;
  const char* spec = std::getenv("CLUSTER_SPEC");
  if (spec == nullptr || *spec == '\0') return Status::Ok();
  TY_ASSIGN_OR_RETURN(replica_contract::ClusterDocument doc,
                      replica_contract::DecodeClusterSpec(spec));
  if (doc.task_pool < 0 || doc.task_pool >= static_cast<int>(doc.pools.size())) {
    return Status::Ok();
  }
  // Shards are numbered across the pools: pool 0's replica is 0, pool 1's are 1..N-1.
  o.shards = 0;
  for (size_t p = 0; p < doc.pools.size(); ++p) {
    if (static_cast<int>(p) == doc.task_pool) o.shard = o.shards + doc.task_index;
    o.shards += static_cast<int>(doc.pools[p].size());
  }
  return Status::Ok();
}

// Shard 0 (the primary replica, whose exit ends the job) waits until every shard's progress file
// says done, so that no replica is stopped before its shard is written.
void WaitForOtherShards(const BatchFlags& o) {
  if (o.shard != 0 || o.shards < 2 || o.progress_dir.empty()) return;
  auto dir = ResolveStoragePath(o.progress_dir);
  if (!dir.ok()) return;
  std::cerr << "trainyard-bert batch-predict: waiting for the other " << o.shards - 1 << " shard(s)"
            << std::endl;
  for (int shard = 1; shard < o.shards;) {
    auto text = ReadFile(*dir / ("progress-" + std::to_string(shard) + ".json"));
    auto p = text.ok() ? ParseJson(*text) : StatusOr<json>(text.status());
    if (p.ok() && p->is_object() && p->value("done", false) == true) {
      ++shard;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// The text of a classifier instance: "text", {"text": "..."} or a one-cell csv row ["text"].
StatusOr<std::string> TextOf(const json& instance) {
  if (instance.is_string()) return instance.get<std::string>();
  if (instance.is_object() && instance.size() == 1 && instance.contains("text") &&
      instance["text"].is_string()) {
    return instance["text"].get<std::string>();
  }
  if (instance.is_array() && instance.size() == 1 && instance[0].is_string()) {
    return instance[0].get<std::string>();
  }
  return InvalidArgumentError(
      "a text classifier takes a string, {\"text\": \"...\"} or a one-column csv row of a quoted "
      "string; got " +
      json(instance).dump().substr(0, 80));
}

class NativePredictor : public batch_prediction::Predictor {
 public:
  NativePredictor(train::Predictor model, int batch) : model_(std::move(model)), batch_(batch) {}

  StatusOr<std::vector<StatusOr<json>>> Predict(const std::vector<json>& instances,
                                                const json&) override {
    std::vector<StatusOr<json>> out(instances.size(), json(nullptr));
    std::vector<std::string> texts;
    std::vector<size_t> at;
    for (size_t i = 0; i < instances.size(); ++i) {
      StatusOr<std::string> text = TextOf(instances[i]);
      if (!text.ok()) {
        out[i] = text.status();
        continue;
      }
      texts.push_back(std::move(text).value());
      at.push_back(i);
    }
    if (texts.empty()) return out;
    TY_ASSIGN_OR_RETURN(std::vector<train::Prediction> predictions, model_.Predict(texts, batch_));
    std::vector<serving::TextPrediction> encoded;
    for (auto& p : predictions) {
      encoded.push_back({static_cast<int>(p.label), std::move(p.probabilities)});
    }
    const json all = serving::EncodePredictions(encoded, model_.labels())["predictions"];
    for (size_t k = 0; k < at.size(); ++k) out[at[k]] = all[k];
    return out;
  }

 private:
  train::Predictor model_;
  int batch_;
};

StatusOr<batch_prediction::ShardOptions> ShardOptionsOf(BatchFlags& o) {
  TY_RETURN_IF_ERROR(PickShard(o));
  batch_prediction::ShardOptions s;
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    TY_ASSIGN_OR_RETURN(std::vector<std::string> uris, Expand(o.inputs[i], i));
    s.inputs.insert(s.inputs.end(), uris.begin(), uris.end());
  }
  s.read = ReadInput;
  if (o.format != "jsonl" && o.format != "csv") {
    return InvalidArgumentError("--instances-format: use jsonl or csv");
  }
  s.format = o.format;
  TY_ASSIGN_OR_RETURN(json config, ParseJson(o.instance_config));
  TY_ASSIGN_OR_RETURN(s.instance_config, spec::DecodeInstanceConfig(config, "--instance-config"));
  if (!o.parameters.empty()) {
    TY_ASSIGN_OR_RETURN(s.parameters, ParseJson(o.parameters));
  }
  s.shard = o.shard;
  s.shards = o.shards;
  s.batch_size = o.batch_size;
  TY_ASSIGN_OR_RETURN(s.output_dir, ResolveStoragePath(o.output_dir));
  if (!o.progress_dir.empty()) {
    TY_ASSIGN_OR_RETURN(std::filesystem::path dir, ResolveStoragePath(o.progress_dir));
    s.progress_file = dir / ("progress-" + std::to_string(o.shard) + ".json");
  }
  return s;
}

// The addresses of the model replicas: CLUSTER_SPEC's pool --model-pool.
StatusOr<std::vector<std::string>> ModelReplicas(int pool) {
  const char* spec = std::getenv("CLUSTER_SPEC");
  if (spec == nullptr || *spec == '\0') {
    return InvalidArgumentError(
        "--model-pool: CLUSTER_SPEC is not set (run as a replica of a "
        "job whose worker pool " +
        std::to_string(pool) + " serves the model)");
  }
  TY_ASSIGN_OR_RETURN(replica_contract::ClusterDocument doc,
                      replica_contract::DecodeClusterSpec(spec));
  if (pool < 0 || pool >= static_cast<int>(doc.pools.size()) || doc.pools[pool].empty()) {
    return InvalidArgumentError("--model-pool: CLUSTER_SPEC has no worker pool " +
                                std::to_string(pool));
  }
  return doc.pools[pool];
}

// Through the model's own serving containers: this replica feeds them every instance.
int RunThroughContainers(BatchFlags& o) {
  auto addresses = ModelReplicas(o.model_pool);
  if (!addresses.ok()) return FailBatch(addresses.status());
  o.shard = 0;
  o.shards = 1;
  auto options = ShardOptionsOf(o);
  if (!options.ok()) return FailBatch(options.status());
  batch_prediction::HttpPredictor predictor(*addresses, o.predict_route, o.health_route);
  // One batch per replica at a time.
  options->batch_size = o.batch_size * static_cast<int>(addresses->size());
  std::cerr << "trainyard-bert batch-predict: waiting for " << addresses->size()
            << " serving container(s) to answer GET " << o.health_route << std::endl;
  const auto t0 = std::chrono::steady_clock::now();
  if (Status s = predictor.WaitHealthy(std::chrono::seconds(o.health_timeout_s)); !s.ok()) {
    return FailBatch(s);
  }
  auto counts = batch_prediction::RunShard(*options, predictor);
  if (!counts.ok()) return FailBatch(counts.status());
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  std::cerr << "trainyard-bert batch-predict: " << counts->successful << " predicted, "
            << counts->failed << " failed of " << counts->total << " in " << took.count() << " s"
            << std::endl;
  return 0;
}

int RunBatchPredict(BatchFlags& o) {
  if (o.batch_size < 1 || o.batch_size > spec::kMaxBatchSize) {
    return FailBatch(
        InvalidArgumentError("--batch-size: must be 1 to " + std::to_string(spec::kMaxBatchSize)));
  }
  if (o.model_pool >= 0) return RunThroughContainers(o);
  if (o.model_dir.empty()) {
    return FailBatch(InvalidArgumentError("--model-dir: required (or --model-pool)"));
  }
  auto options = ShardOptionsOf(o);
  if (!options.ok()) return FailBatch(options.status());
  model::ConfigureCpuRuntime(o.threads > 0 ? o.threads : model::UsableCpuCount());
  const auto t0 = std::chrono::steady_clock::now();
  auto model_dir = ResolveStoragePath(o.model_dir);
  if (!model_dir.ok()) return FailBatch(model_dir.status());
  std::vector<std::string> warnings;
  auto loaded = train::Predictor::Load(*model_dir, o.max_length, &warnings);
  if (!loaded.ok()) return FailBatch(loaded.status());
  for (const auto& w : warnings)
    std::cerr << "trainyard-bert batch-predict: warning: " << w << "\n";
  NativePredictor predictor(std::move(loaded).value(), o.batch_size);
  std::cerr << "trainyard-bert batch-predict: shard " << options->shard << " of " << options->shards
            << ", " << options->inputs.size() << " input file(s)" << std::endl;
  auto counts = batch_prediction::RunShard(*options, predictor);
  if (!counts.ok()) return FailBatch(counts.status());
  WaitForOtherShards(o);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  std::cerr << "trainyard-bert batch-predict: " << counts->successful << " predicted, "
            << counts->failed << " failed of " << counts->total << " in " << took.count() << " s ("
            << (took.count() > 0 ? counts->total / took.count() : 0) << " instances/s)"
            << std::endl;
  return 0;
}

const bool kBatchPredictRegistered = RegisterCommand(
    {.name = "batch-predict",
     .description = "Score jsonl/csv files with a model directory, writing Vertex's batch "
                    "prediction output (one shard)",
     .order = 46,
     .setup = [](CLI::App& sub) -> CommandRunner {
       auto o = std::make_shared<BatchFlags>();
       sub.add_option("--model-dir", o->model_dir, "Model directory or gs:// URI");
       sub.add_option("--model-pool", o->model_pool,
                      "Send the instances to the model's serving containers instead: the "
                      "replicas of this worker pool (CLUSTER_SPEC)");
       sub.add_option("--predict-route", o->predict_route, "With --model-pool: the predict path")
           ->capture_default_str();
       sub.add_option("--health-route", o->health_route, "With --model-pool: the health path")
           ->capture_default_str();
       sub.add_option("--health-timeout-s", o->health_timeout_s,
                      "With --model-pool: how long the containers may take to become healthy")
           ->capture_default_str();
       sub.add_option("--input", o->inputs,
                      "Input file (gs:// URI or path; '*' matches any run "
                      "of characters); repeatable")
           ->required();
       sub.add_option("--instances-format", o->format, "jsonl or csv")->capture_default_str();
       sub.add_option("--instance-config", o->instance_config,
                      "Vertex's instanceConfig as JSON (keyField, includedFields, ...)")
           ->capture_default_str();
       sub.add_option("--parameters", o->parameters, "modelParameters as JSON (unused by BERT)");
       sub.add_option("--output-dir", o->output_dir,
                      "Where prediction.results-* and prediction.errors_stats-* go")
           ->required();
       sub.add_option("--progress-dir", o->progress_dir,
                      "Where progress-<shard>.json is rewritten as the shard goes");
       sub.add_option("--shard", o->shard, "This shard (default: CLUSTER_SPEC's task index)");
       sub.add_option("--shards", o->shards, "Shard count (default: the replicas of the pool)");
       sub.add_option("--batch-size", o->batch_size, "Instances per forward pass")
           ->capture_default_str();
       sub.add_option("--max-length", o->max_length, "Max tokens per text incl. [CLS]/[SEP]")
           ->capture_default_str();
       sub.add_option("--threads", o->threads, "CPU threads (0 = every CPU this process may use)")
           ->capture_default_str();
       return [o] { return RunBatchPredict(*o); };
     }});

}  // namespace
}  // namespace trainyard::tools

#endif  // TRAINYARD_HAVE_TRAINER
