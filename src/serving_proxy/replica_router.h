// ReplicaRouter: the server's side of online prediction. It knows the serving replicas of every
// deployed model (a *group*, named by the endpoint controller: "<endpoint>/<deployedModelId>"),
// checks their health and forwards prediction requests to healthy ones.
//
// Health: every probe_interval each replica's health route (serving_contract.h) is asked with a
// GET; 200 makes it healthy, anything else (or no answer within probe_timeout) counts as a
// failure, and `unhealthy_after` failures in a row make it unhealthy. A replica starts unhealthy:
// it gets no traffic before its first 200. A forward that finds no connection (the replica died)
// marks it unhealthy at once, so the next requests go elsewhere.
//
// Forwarding: to the healthy replica with the fewest requests in flight, over a kept-alive
// connection from that replica's pool. No healthy replica, or a replica that dies mid-request,
// is UNAVAILABLE naming the deployed model and saying to retry (HTTP 503: clients retry it);
// nothing waits longer than request_timeout. A replica's own answer (its status, body and
// content type) is returned as it is, errors included.
//
// Thread-safety: all methods may be called concurrently. Forward never holds the router's lock
// while it talks to a replica.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/periodic_thread.h"
#include "common/status.h"

namespace trainyard::serving_proxy {

struct ReplicaTarget {
  std::string id;  // unique within its group (the replica's job name); in messages
  std::string host = "127.0.0.1";
  int port = 0;
  std::string predict_route;  // POST
  std::string health_route;   // GET
};

struct ForwardRequest {
  std::string body;
  std::string content_type = "application/json";
  // Headers passed through to the replica as they are (rawPredict's caller headers).
  std::vector<std::pair<std::string, std::string>> headers;
};

struct ForwardReply {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string replica;  // the ReplicaTarget::id that answered
};

struct GroupHealth {
  int replicas = 0;
  int healthy = 0;
  int in_flight = 0;       // requests being forwarded now
  uint64_t forwarded = 0;  // requests forwarded since the group was set
  uint64_t failed = 0;     // of those, how many got no answer from a replica (UNAVAILABLE)
  double seconds = 0;      // the time forwarded requests took, summed
  std::string last_error;  // the latest failed probe or forward, "" when none
};

struct ReplicaRouterOptions {
  std::chrono::milliseconds probe_interval{500};
  std::chrono::milliseconds probe_timeout{1000};
  std::chrono::milliseconds request_timeout{60000};
  int unhealthy_after = 2;           // failed probes in a row
  size_t max_idle_connections = 32;  // kept per replica
};

class ReplicaRouter {
 public:
  explicit ReplicaRouter(ReplicaRouterOptions options = {});
  ~ReplicaRouter();
  ReplicaRouter(const ReplicaRouter&) = delete;
  ReplicaRouter& operator=(const ReplicaRouter&) = delete;

  // Starts probing every probe_interval on a thread of its own; Stop ends it.
  void Start();
  void Stop();

  // Sets the replicas of `group`. A replica already known (same id, host and port) keeps its
  // health and connections; the others start unhealthy. An empty list removes the group.
  void SetReplicas(const std::string& group, std::vector<ReplicaTarget> replicas);
  void RemoveGroup(const std::string& group);
  // All zeros for an unknown group.
  GroupHealth Health(const std::string& group) const;
  // Every group's, by name (for /metrics).
  std::map<std::string, GroupHealth> AllHealth() const;
  // Probes every replica once (the thread's body; tests call it).
  void ProbeOnce();

  // Forwards `request` to a healthy replica of `group` (see the top of this file).
  StatusOr<ForwardReply> Forward(const std::string& group, const ForwardRequest& request);

 private:
  struct Replica;
  struct Group {
    std::vector<std::shared_ptr<Replica>> replicas;
    uint64_t forwarded = 0;
    uint64_t failed = 0;
    double seconds = 0;
    std::string last_error;
  };
  std::shared_ptr<Replica> Pick(const std::string& group, std::string* why);
  void Probe(const std::shared_ptr<Replica>& replica);
  GroupHealth HealthOf(const Group& g) const;  // mu_ held

  ReplicaRouterOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Group> groups_;
  PeriodicThread prober_;
};

}  // namespace trainyard::serving_proxy
