#include "serving/prediction_server.h"

#include <httplib.h>

#include <chrono>
#include <thread>

#include "api/http_bind.h"
#include "api/http_status.h"

namespace trainyard::serving {
namespace {

constexpr char kJson[] = "application/json; charset=utf-8";

// Error messages may quote the request's bytes (a JSON parser's "last read: ..."), which need not
// be UTF-8: invalid sequences become U+FFFD instead of making dump() throw.
std::string Dump(const nlohmann::json& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void SetError(httplib::Response& res, const Status& status) {
  res.status = api::HttpStatusFor(status.code());
  res.set_content(Dump(api::ErrorBody(status)), kJson);
}

void SetError(httplib::Response& res, int http, StatusCode code, const std::string& message) {
  res.status = http;
  res.set_content(Dump(api::ErrorBody(http, code, message)), kJson);
}

Status CheckRoute(const char* name, const std::string& route) {
  if (route.empty() || route.front() != '/') {
    return InvalidArgumentError(std::string(name) + " '" + route +
                                "' is not an HTTP path; it must start with '/'");
  }
  return Status::Ok();
}

}  // namespace

PredictionServer::PredictionServer(PredictionServerOptions options)
    : options_(std::move(options)), server_(std::make_unique<httplib::Server>()) {
  const int threads = options_.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_payload_max_length(options_.max_request_bytes);
  server_->set_tcp_nodelay(true);  // header and body go out in separate writes: no Nagle stalls
  const size_t limit = options_.max_request_bytes;
  server_->set_error_handler([limit](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 413) {
      SetError(res, 413, StatusCode::kInvalidArgument,
               "the request body is larger than " + std::to_string(limit) +
                   " bytes (Vertex's limit for prediction requests); send fewer instances per "
                   "request");
    } else if (res.status == 404 || res.status == 405) {
      SetError(res, 404, StatusCode::kNotFound,
               "no route " + req.method + " " + req.path +
                   "; this model server answers POST to its predict route and GET to its "
                   "health route");
    }
  });
  server_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        SetError(res, InternalError("the model server failed on this request"));
      });
  server_->Get(options_.health_route, [this](const httplib::Request&, httplib::Response& res) {
    if (batcher_.load() == nullptr) {
      SetError(res, UnavailableError("the model is still loading"));
      return;
    }
    res.set_content("{}\n", kJson);
  });
  server_->Post(options_.predict_route,
                [this](const httplib::Request& req, httplib::Response& res) {
                  int status = 200;
                  std::string body;
                  Predict(req.body, &status, &body);
                  res.status = status;
                  res.set_content(body, kJson);
                });
}

PredictionServer::~PredictionServer() { Stop(); }

void PredictionServer::SetModel(DynamicBatcher* batcher, std::vector<std::string> labels) {
  labels_ = std::move(labels);
  batcher_.store(batcher);
}

void PredictionServer::Predict(const std::string& body, int* status, std::string* out) const {
  auto fail = [&](const Status& s) {
    *status = api::HttpStatusFor(s.code());
    *out = Dump(api::ErrorBody(s));
  };
  DynamicBatcher* batcher = batcher_.load();
  if (batcher == nullptr) return fail(UnavailableError("the model is still loading; retry"));
  auto texts = ParseTextInstances(body);
  if (!texts.ok()) return fail(texts.status());
  auto predictions = batcher->Classify(std::move(texts).value());
  if (!predictions.ok()) return fail(predictions.status());
  for (const TextPrediction& p : *predictions) {
    if (p.label < 0 || static_cast<size_t>(p.label) >= labels_.size()) {
      return fail(InternalError("the model predicted class " + std::to_string(p.label) +
                                ", which its config does not name"));
    }
  }
  *out = Dump(EncodePredictions(*predictions, labels_));
}

StatusOr<int> PredictionServer::Bind() {
  TY_RETURN_IF_ERROR(CheckRoute("predict route", options_.predict_route));
  TY_RETURN_IF_ERROR(CheckRoute("health route", options_.health_route));
  const int port = api::BindHttpServer(*server_, options_.host, options_.port);
  if (port < 0) {
    return UnavailableError("cannot listen on " + options_.host + ":" +
                            std::to_string(options_.port) + " (address in use or not local)");
  }
  return port;
}

void PredictionServer::Serve() {
  serving_ = true;
  if (!stop_requested_) server_->listen_after_bind();
  serving_ = false;
}

// As api::ApiServer::Stop: httplib's stop() is lost on a server not yet running, so a Serve()
// that has begun is waited for until it runs.
void PredictionServer::Stop() {
  stop_requested_ = true;
  while (serving_ && !server_->is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  server_->stop();
}

}  // namespace trainyard::serving
