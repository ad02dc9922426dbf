// A batch prediction's model behind its own serving container: the model replicas of the backing
// job (worker pool 1), reached over HTTP with Vertex's serving contract
// (replica_contract/serving_contract.h): GET <health route> answers 200 once the model is loaded;
// POST <predict route> {"instances": [...], "parameters": ...} answers {"predictions": [...]}.
//
// Predict splits a batch into one part per replica and sends the parts at once (one request in
// flight per replica). A part the model refuses (HTTP 4xx) or answers with the wrong number of
// predictions is sent again one instance at a time, so that each bad instance gets its own error
// (the model's message) and the others their predictions. A replica that does not answer (a
// connection error, HTTP 5xx) is retried 3 times with backoff; then the batch fails as a whole
// (the job fails: the model cannot serve).
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "batch_prediction/shard_runner.h"
#include "common/status.h"

namespace trainyard::batch_prediction {

class HttpPredictor : public Predictor {
 public:
  // `addresses`: "host:port" of each model replica; routes start with '/'.
  HttpPredictor(std::vector<std::string> addresses, std::string predict_route,
                std::string health_route);

  // OK once every replica's health route answers 200; UNAVAILABLE naming the replicas that did
  // not within `timeout` (with the last answer or connection error of each).
  Status WaitHealthy(std::chrono::milliseconds timeout);

  StatusOr<std::vector<StatusOr<nlohmann::json>>> Predict(
      const std::vector<nlohmann::json>& instances, const nlohmann::json& parameters) override;

  size_t replicas() const { return addresses_.size(); }

 private:
  // One part to one replica; the per-instance fallback on a refusal.
  StatusOr<std::vector<StatusOr<nlohmann::json>>> PredictPart(
      const std::string& address, const std::vector<nlohmann::json>& instances,
      const nlohmann::json& parameters);

  std::vector<std::string> addresses_;
  std::string predict_route_;
  std::string health_route_;
};

}  // namespace trainyard::batch_prediction
