// The HTTP side of a model server that keeps Vertex's serving contract (serving_contract.h): GET
// <health route> answers 200 once a model is set and 503 while it loads; POST <predict route>
// takes {"instances": [...]} (prediction_codec.h), runs them through the DynamicBatcher and
// answers {"predictions": [...]}. Errors are google.rpc.Status bodies (api/http_status.h): 400
// naming the field, 413 over the request limit, 503 while loading or stopping (retryable), 429
// when the batcher's queue is full. Any other path is 404 naming the two routes.
//
// Lifecycle: Bind() (port 0 picks a free one), then Serve() on a thread of the caller's, then
// Stop() from any thread; SetModel() at any time, once. Requests in flight when Stop() is called
// finish (the batcher's queued ones get 503).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "serving/dynamic_batcher.h"

namespace httplib {
class Server;
}

namespace trainyard::serving {

struct PredictionServerOptions {
  std::string host = "0.0.0.0";  // Vertex's contract: listen on every interface
  int port = 0;                  // 0 = any free port
  std::string predict_route;     // required, starts with '/'
  std::string health_route;      // required, starts with '/'
  int threads = 32;              // concurrent requests served (each waits for its batch)
  size_t max_request_bytes = 1536 * 1024;
};

class PredictionServer {
 public:
  explicit PredictionServer(PredictionServerOptions options);
  ~PredictionServer();

  // Listens. The port (the one picked for port 0), or UNAVAILABLE naming host:port when it is
  // taken, INVALID_ARGUMENT for a route that is not a path.
  StatusOr<int> Bind();
  // Serves until Stop(). Precondition: Bind() succeeded.
  void Serve();
  void Stop();

  // The model is ready: predictions go to `batcher` (not owned; outlives the server), class ids
  // are named by `labels`. Thread-safe.
  void SetModel(DynamicBatcher* batcher, std::vector<std::string> labels);

 private:
  void Predict(const std::string& body, int* status, std::string* out) const;

  PredictionServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::atomic<DynamicBatcher*> batcher_{nullptr};
  std::vector<std::string> labels_;  // written once, before batcher_ is published
  std::atomic<bool> serving_{false};
  std::atomic<bool> stop_requested_{false};
};

}  // namespace trainyard::serving
