// trainyard-bert serve: a model server for an exported (or HF) model directory that keeps Vertex's
// serving contract (replica_contract/serving_contract.h), so the same process serves a deployed
// model under `trainyard` and runs by hand or in any container: port, routes and the model's
// location come from AIP_HTTP_PORT, AIP_PREDICT_ROUTE, AIP_HEALTH_ROUTE and AIP_STORAGE_URI
// unless flags say otherwise. The model is loaded once; concurrent requests are batched
// (serving/dynamic_batcher.h). It listens before loading, so the health route answers 503 until
// the model is ready. SIGTERM or SIGINT: requests in flight finish, queued ones get 503, exit 0.
#include "command_registry.h"

#if defined(TRAINYARD_HAVE_TRAINER)

#include <pthread.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "common/bucket_path.h"
#include "model/cpu_runtime.h"
#include "replica_contract/serving_contract.h"
#include "serving/prediction_server.h"
#include "train/predictor.h"

namespace trainyard::tools {
namespace {

namespace contract = serving_contract;

struct ServeFlags {
  std::string model_dir;  // "" = AIP_STORAGE_URI
  std::string host = "0.0.0.0";
  int port = -1;  // -1 = AIP_HTTP_PORT, else 8080
  std::string predict_route, health_route;
  int max_batch_size = 32;
  double batch_delay_ms = 0;
  int max_length = 100;
  int threads = 0;
  int http_threads = 64;
};

int FailServe(const Status& s) { return ReportFailure("trainyard-bert serve: ", s); }

// The contract's settings from the environment, with the flags on top.
StatusOr<contract::ServingEnv> ServeSettings(const ServeFlags& o) {
  contract::EnvMap env;
  for (const char* name :
       {contract::kAipHttpPort, contract::kAipPredictRoute, contract::kAipHealthRoute,
        contract::kAipStorageUri, contract::kAipEndpointId, contract::kAipDeployedModelId}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  TY_ASSIGN_OR_RETURN(contract::ServingEnv s, contract::DecodeServingEnv(env));
  if (o.port >= 0) s.http_port = o.port;
  if (!o.predict_route.empty()) s.predict_route = o.predict_route;
  if (!o.health_route.empty()) s.health_route = o.health_route;
  if (!o.model_dir.empty()) s.storage_uri = o.model_dir;
  if (s.storage_uri.empty()) {
    return InvalidArgumentError("--model-dir: required (or set AIP_STORAGE_URI)");
  }
  return s;
}

// Loads the model and hands it to the server; the batcher must outlive the server's use of it.
StatusOr<std::unique_ptr<serving::DynamicBatcher>> LoadServedModel(
    const ServeFlags& o, const std::string& model_uri, serving::PredictionServer& server) {
  TY_ASSIGN_OR_RETURN(auto model_dir, ResolveStoragePath(model_uri));
  std::vector<std::string> warnings;
  TY_ASSIGN_OR_RETURN(train::Predictor loaded,
                      train::Predictor::Load(model_dir, o.max_length, &warnings));
  for (const auto& w : warnings) std::cerr << "trainyard-bert serve: warning: " << w << "\n";
  auto predictor = std::make_shared<train::Predictor>(std::move(loaded));
  const int batch = o.max_batch_size;
  auto classify =
      [predictor, batch](
          const std::vector<std::string>& texts) -> StatusOr<std::vector<serving::TextPrediction>> {
    TY_ASSIGN_OR_RETURN(auto predictions, predictor->Predict(texts, batch));
    std::vector<serving::TextPrediction> out;
    out.reserve(predictions.size());
    for (auto& p : predictions) {
      out.push_back({static_cast<int>(p.label), std::move(p.probabilities)});
    }
    return out;
  };
  auto batcher = std::make_unique<serving::DynamicBatcher>(
      classify, serving::BatcherOptions{.max_batch_size = batch,
                                        .max_delay = std::chrono::microseconds(
                                            static_cast<int64_t>(o.batch_delay_ms * 1000))});
  server.SetModel(batcher.get(), predictor->labels());
  return batcher;
}

Status CheckServeFlags(const ServeFlags& o) {
  if (o.max_batch_size < 1) return InvalidArgumentError("--max-batch-size: must be >= 1");
  if (o.batch_delay_ms < 0) return InvalidArgumentError("--batch-delay-ms: must be >= 0");
  if (o.threads < 0) return InvalidArgumentError("--threads: must be >= 0 (0 = every CPU)");
  if (o.http_threads < 1) return InvalidArgumentError("--http-threads: must be >= 1");
  return Status::Ok();
}

int RunServe(const ServeFlags& o) {
  if (Status s = CheckServeFlags(o); !s.ok()) return FailServe(s);
  auto settings = ServeSettings(o);
  if (!settings.ok()) return FailServe(settings.status());
  // Signals are taken by sigwait below, so block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  model::ConfigureCpuRuntime(o.threads > 0 ? o.threads : model::UsableCpuCount());
  serving::PredictionServer server({.host = o.host,
                                    .port = settings->http_port,
                                    .predict_route = settings->predict_route,
                                    .health_route = settings->health_route,
                                    .threads = o.http_threads});
  auto port = server.Bind();
  if (!port.ok()) return FailServe(port.status());
  std::thread http([&] { server.Serve(); });
  std::cerr << "trainyard-bert serve: listening on " << o.host << ":" << *port << " (predict: POST "
            << settings->predict_route << ", health: GET " << settings->health_route << ")"
            << std::endl;
  const auto t0 = std::chrono::steady_clock::now();
  auto batcher = LoadServedModel(o, settings->storage_uri, server);
  int code = 0;
  if (!batcher.ok()) {
    code = FailServe(batcher.status());
  } else {
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
    std::cerr << "trainyard-bert serve: model " << settings->storage_uri << " loaded in "
              << took.count() << " s; ready" << std::endl;
    int sig = 0;
    sigwait(&signals, &sig);
    std::cerr << "trainyard-bert serve: signal " << sig << ", stopping" << std::endl;
  }
  server.Stop();
  http.join();
  if (batcher.ok()) (*batcher)->Stop();
  return code;
}

const bool kServeRegistered = RegisterCommand(
    {.name = "serve",
     .description = "Serve a model directory over HTTP with Vertex's prediction contract",
     .order = 45,
     .setup = [](CLI::App& sub) -> CommandRunner {
       auto o = std::make_shared<ServeFlags>();
       sub.add_option("--model-dir", o->model_dir,
                      "Model directory or gs:// URI (default: $AIP_STORAGE_URI)");
       sub.add_option("--host", o->host, "Address to listen on")->capture_default_str();
       sub.add_option("--port", o->port, "Port (default: $AIP_HTTP_PORT, else 8080; 0 = any)")
           ->check(CLI::Range(0, 65535));
       sub.add_option("--predict-route", o->predict_route,
                      "Predict path (default: $AIP_PREDICT_ROUTE, else Vertex's)");
       sub.add_option("--health-route", o->health_route,
                      "Health path (default: $AIP_HEALTH_ROUTE, else Vertex's)");
       sub.add_option("--max-batch-size", o->max_batch_size, "Most instances in one forward pass")
           ->capture_default_str();
       sub.add_option("--batch-delay-ms", o->batch_delay_ms,
                      "How long a batch waits for more requests once it has one (0: it starts when "
                      "the model is free; requests arriving meanwhile form the next batch)")
           ->capture_default_str();
       sub.add_option("--max-length", o->max_length, "Max tokens per text incl. [CLS]/[SEP]")
           ->capture_default_str();
       sub.add_option("--threads", o->threads, "CPU threads (0 = every CPU this process may use)")
           ->capture_default_str();
       sub.add_option("--http-threads", o->http_threads, "Requests served at once")
           ->capture_default_str();
       return [o] { return RunServe(*o); };
     }});

}  // namespace
}  // namespace trainyard::tools

#endif  // TRAINYARD_HAVE_TRAINER
