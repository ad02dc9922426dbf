#include "serving_proxy/replica_router.h"

#include <httplib.h>

#include <algorithm>
#include <limits>

namespace trainyard::serving_proxy {

struct ReplicaRouter::Replica {
  ReplicaTarget target;
  // Guarded by the router's mu_.
  bool healthy = false;
  int failed_probes = 0;
  int in_flight = 0;
  std::string last_error;
  // Idle kept-alive connections; guarded by pool_mu (never with the router's mu_ held).
  std::mutex pool_mu;
  std::vector<std::unique_ptr<httplib::Client>> idle;
};

namespace {

std::unique_ptr<httplib::Client> Connect(const ReplicaTarget& t, std::chrono::milliseconds connect,
                                         std::chrono::milliseconds read) {
  auto client = std::make_unique<httplib::Client>(t.host, t.port);
  client->set_keep_alive(true);
  // Headers and body leave in two writes: without it each request waits for a delayed ACK.
  client->set_tcp_nodelay(true);
  client->set_connection_timeout(connect);
  client->set_read_timeout(read);
  client->set_write_timeout(read);
  return client;
}

}  // namespace

ReplicaRouter::ReplicaRouter(ReplicaRouterOptions options) : options_(options) {}

ReplicaRouter::~ReplicaRouter() { Stop(); }

void ReplicaRouter::Start() {
  prober_.Start(options_.probe_interval, [this] { ProbeOnce(); });
}

void ReplicaRouter::Stop() { prober_.Stop(); }

void ReplicaRouter::SetReplicas(const std::string& group, std::vector<ReplicaTarget> replicas) {
  std::lock_guard<std::mutex> lock(mu_);
  if (replicas.empty()) {
    groups_.erase(group);
    return;
  }
  Group& g = groups_[group];
  std::vector<std::shared_ptr<Replica>> next;
  for (ReplicaTarget& t : replicas) {
    auto same = std::find_if(g.replicas.begin(), g.replicas.end(), [&](const auto& r) {
      return r->target.id == t.id && r->target.host == t.host && r->target.port == t.port;
    });
    if (same != g.replicas.end()) {
      (*same)->target = std::move(t);  // routes may change; health stays
      next.push_back(*same);
      continue;
    }
    auto r = std::make_shared<Replica>();
    r->target = std::move(t);
    next.push_back(std::move(r));
  }
  g.replicas = std::move(next);
}

void ReplicaRouter::RemoveGroup(const std::string& group) {
  std::lock_guard<std::mutex> lock(mu_);
  groups_.erase(group);
}

GroupHealth ReplicaRouter::HealthOf(const Group& g) const {
  GroupHealth h;
  h.replicas = static_cast<int>(g.replicas.size());
  h.forwarded = g.forwarded;
  h.failed = g.failed;
  h.seconds = g.seconds;
  h.last_error = g.last_error;
  for (const auto& r : g.replicas) {
    if (r->healthy) ++h.healthy;
    h.in_flight += r->in_flight;
  }
  return h;
}

GroupHealth ReplicaRouter::Health(const std::string& group) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = groups_.find(group);
  return it == groups_.end() ? GroupHealth{} : HealthOf(it->second);
}

std::map<std::string, GroupHealth> ReplicaRouter::AllHealth() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, GroupHealth> out;
  for (const auto& [name, g] : groups_) out[name] = HealthOf(g);
  return out;
}

void ReplicaRouter::ProbeOnce() {
  std::vector<std::shared_ptr<Replica>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, g] : groups_) {
      all.insert(all.end(), g.replicas.begin(), g.replicas.end());
    }
  }
  for (const auto& r : all) Probe(r);
}

void ReplicaRouter::Probe(const std::shared_ptr<Replica>& replica) {
  ReplicaTarget target;
  {
    std::lock_guard<std::mutex> lock(mu_);
    target = replica->target;
  }
  httplib::Client client(target.host, target.port);
  client.set_connection_timeout(options_.probe_timeout);
  client.set_read_timeout(options_.probe_timeout);
  httplib::Result res = client.Get(target.health_route);
  std::string error;
  if (!res) {
    error = "health check of " + target.id + " (" + target.host + ":" +
            std::to_string(target.port) + target.health_route +
            ") got no answer: " + httplib::to_string(res.error());
  } else if (res->status != 200) {
    error = "health check of " + target.id + " answered HTTP " + std::to_string(res->status);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (error.empty()) {
    replica->healthy = true;
    replica->failed_probes = 0;
    return;
  }
  replica->last_error = error;
  if (++replica->failed_probes >= options_.unhealthy_after) replica->healthy = false;
  for (auto& [name, g] : groups_) {
    if (std::find(g.replicas.begin(), g.replicas.end(), replica) != g.replicas.end()) {
      g.last_error = error;
    }
  }
}

std::shared_ptr<ReplicaRouter::Replica> ReplicaRouter::Pick(const std::string& group,
                                                            std::string* why) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = groups_.find(group);
  if (it == groups_.end() || it->second.replicas.empty()) {
    *why = "it has no replicas running";
    return nullptr;
  }
  std::shared_ptr<Replica> best;
  for (const auto& r : it->second.replicas) {
    if (r->healthy && (!best || r->in_flight < best->in_flight)) best = r;
  }
  if (!best) {
    *why = "none of its " + std::to_string(it->second.replicas.size()) +
           " replicas is healthy now" +
           (it->second.last_error.empty() ? "" : " (" + it->second.last_error + ")");
    return nullptr;
  }
  ++best->in_flight;
  ++it->second.forwarded;
  return best;
}

StatusOr<ForwardReply> ReplicaRouter::Forward(const std::string& group,
                                              const ForwardRequest& request) {
  std::string why;
  std::shared_ptr<Replica> replica = Pick(group, &why);
  if (!replica) {
    return UnavailableError("deployed model " + group + " cannot take requests: " + why +
                            "; retry in a few seconds");
  }
  ReplicaTarget target;
  {
    std::lock_guard<std::mutex> lock(mu_);
    target = replica->target;
  }
  std::unique_ptr<httplib::Client> client;
  {
    std::lock_guard<std::mutex> lock(replica->pool_mu);
    if (!replica->idle.empty()) {
      client = std::move(replica->idle.back());
      replica->idle.pop_back();
    }
  }
  const bool reused = client != nullptr;
  if (!client) client = Connect(target, options_.probe_timeout, options_.request_timeout);
  httplib::Headers headers;
  for (const auto& [k, v] : request.headers) headers.emplace(k, v);
  const auto sent = std::chrono::steady_clock::now();
  httplib::Result res =
      client->Post(target.predict_route, headers, request.body, request.content_type);
  if (!res && reused && std::chrono::steady_clock::now() - sent < options_.probe_timeout) {
    // A kept connection the replica closed while idle: once more on a new one (a prediction
    // changes nothing, so sending it twice is safe).
    client = Connect(target, options_.probe_timeout, options_.request_timeout);
    res = client->Post(target.predict_route, headers, request.body, request.content_type);
  }
  std::string error;
  ForwardReply reply;
  if (res) {
    reply.status = res->status;
    reply.body = std::move(res->body);
    reply.content_type = res->get_header_value("Content-Type");
    reply.replica = target.id;
    std::lock_guard<std::mutex> lock(replica->pool_mu);
    if (replica->idle.size() < options_.max_idle_connections) {
      replica->idle.push_back(std::move(client));
    }
  } else {
    error = "replica " + target.id + " did not answer: " + httplib::to_string(res.error());
  }
  std::lock_guard<std::mutex> lock(mu_);
  --replica->in_flight;
  auto it = groups_.find(group);
  if (it != groups_.end()) {
    it->second.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
    if (!error.empty()) ++it->second.failed;
  }
  if (error.empty()) return reply;
  // A timeout is the replica being slow, not gone; a quick failure means it died.
  if (std::chrono::steady_clock::now() - sent < options_.request_timeout) replica->healthy = false;
  replica->last_error = error;
  if (it != groups_.end()) it->second.last_error = error;
  return UnavailableError("deployed model " + group + ": " + error + "; retry the request");
}

}  // namespace trainyard::serving_proxy
