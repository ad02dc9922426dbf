#include "batch_prediction/http_predictor.h"

#include <httplib.h>

#include <future>
#include <thread>

#include "common/json_parse.h"

namespace trainyard::batch_prediction {
namespace {

using nlohmann::json;

constexpr int kAttempts = 4;

struct Answer {
  int status = 0;  // 0: no answer (connection error)
  std::string body;
  std::string error;  // the connection error
};

Answer Post(const std::string& address, const std::string& route, const std::string& body) {
  const size_t colon = address.rfind(':');
  httplib::Client client(address.substr(0, colon), std::stoi(address.substr(colon + 1)));
  client.set_connection_timeout(std::chrono::seconds(10));
  client.set_read_timeout(std::chrono::seconds(600));
  auto r = client.Post(route, body, "application/json");
  if (!r) return {0, "", httplib::to_string(r.error())};
  return {r->status, r->body, ""};
}

// The model's own words for a refused request: google.rpc.Status's or a plain error message.
std::string RefusalMessage(const Answer& a) {
  StatusOr<json> j = ParseJson(a.body);
  if (j.ok() && j->is_object()) {
    if ((*j)["error"].is_object() && (*j)["error"]["message"].is_string()) {
      return (*j)["error"]["message"];
    }
    if ((*j)["error"].is_string()) return (*j)["error"];
  }
  return "HTTP " + std::to_string(a.status) + ": " + a.body.substr(0, 300);
}

// The predictions of a 200 answer for `n` instances, or why they are not.
StatusOr<std::vector<json>> PredictionsOf(const Answer& a, size_t n) {
  TY_ASSIGN_OR_RETURN(json j, ParseJson(a.body));
  if (!j.is_object() || !j["predictions"].is_array()) {
    return InvalidArgumentError("the model answered without a \"predictions\" array");
  }
  if (j["predictions"].size() != n) {
    return InvalidArgumentError("the model answered " + std::to_string(j["predictions"].size()) +
                                " predictions for " + std::to_string(n) + " instances");
  }
  return j["predictions"].get<std::vector<json>>();
}

}  // namespace

HttpPredictor::HttpPredictor(std::vector<std::string> addresses, std::string predict_route,
                             std::string health_route)
    : addresses_(std::move(addresses)),
      predict_route_(std::move(predict_route)),
      health_route_(std::move(health_route)) {}

Status HttpPredictor::WaitHealthy(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::string> last(addresses_.size(), "no answer yet");
  std::vector<bool> healthy(addresses_.size(), false);
  while (true) {
    bool all = true;
    for (size_t i = 0; i < addresses_.size(); ++i) {
      if (healthy[i]) continue;
      const size_t colon = addresses_[i].rfind(':');
      httplib::Client client(addresses_[i].substr(0, colon),
                             std::stoi(addresses_[i].substr(colon + 1)));
      client.set_connection_timeout(std::chrono::seconds(2));
      auto r = client.Get(health_route_);
      healthy[i] = r && r->status == 200;
      if (!healthy[i]) {
        last[i] = r ? "HTTP " + std::to_string(r->status) : httplib::to_string(r.error());
        all = false;
      }
    }
    if (all) return Status::Ok();
    if (std::chrono::steady_clock::now() > deadline) {
      std::string which;
      for (size_t i = 0; i < addresses_.size(); ++i) {
        if (!healthy[i]) which += (which.empty() ? "" : "; ") + addresses_[i] + ": " + last[i];
      }
      return UnavailableError("the model's serving containers did not answer GET " + health_route_ +
                              " with 200 in " + std::to_string(timeout.count() / 1000) + " s (" +
                              which + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

StatusOr<std::vector<StatusOr<json>>> HttpPredictor::PredictPart(const std::string& address,
                                                                 const std::vector<json>& instances,
                                                                 const json& parameters) {
  json request = {{"instances", instances}};
  if (!parameters.is_null()) request["parameters"] = parameters;
  const std::string body = request.dump(-1, ' ', false, json::error_handler_t::replace);
  Answer a;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
    a = Post(address, predict_route_, body);
    if (a.status != 0 && a.status < 500) break;
  }
  if (a.status == 0 || a.status >= 500) {
    return UnavailableError("the model's serving container at " + address + " did not answer " +
                            "POST " + predict_route_ + " after " + std::to_string(kAttempts) +
                            " tries: " + (a.status == 0 ? a.error : RefusalMessage(a)));
  }
  if (a.status == 200) {
    StatusOr<std::vector<json>> predictions = PredictionsOf(a, instances.size());
    if (predictions.ok()) {
      return std::vector<StatusOr<json>>(predictions->begin(), predictions->end());
    }
    if (instances.size() == 1) return std::vector<StatusOr<json>>{predictions.status()};
  } else if (instances.size() == 1) {
    return std::vector<StatusOr<json>>{InvalidArgumentError(RefusalMessage(a))};
  }
  // A refused part: one instance at a time, so each bad one gets its own error.
  std::vector<StatusOr<json>> out;
  for (const json& instance : instances) {
    TY_ASSIGN_OR_RETURN(auto one, PredictPart(address, {instance}, parameters));
    out.push_back(std::move(one.front()));
  }
  return out;
}

StatusOr<std::vector<StatusOr<json>>> HttpPredictor::Predict(const std::vector<json>& instances,
                                                             const json& parameters) {
  const size_t parts = std::min(addresses_.size(), instances.size());
  if (parts == 0) return std::vector<StatusOr<json>>{};
  const size_t per = (instances.size() + parts - 1) / parts;
  std::vector<std::future<StatusOr<std::vector<StatusOr<json>>>>> sent;
  for (size_t p = 0; p * per < instances.size(); ++p) {
    std::vector<json> part(instances.begin() + p * per,
                           instances.begin() + std::min(instances.size(), (p + 1) * per));
    sent.push_back(std::async(std::launch::async, [this, p, part = std::move(part), &parameters] {
      return PredictPart(addresses_[p], part, parameters);
    }));
  }
  std::vector<StatusOr<json>> out;
  Status failed;
  for (auto& f : sent) {
    StatusOr<std::vector<StatusOr<json>>> got = f.get();
    if (!got.ok()) {
      if (failed.ok()) failed = got.status();
      continue;
    }
    for (auto& r : *got) out.push_back(std::move(r));
  }
  if (!failed.ok()) return failed;
  return out;
}

}  // namespace trainyard::batch_prediction
