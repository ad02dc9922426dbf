#!/usr/bin/env bash
# A real Prometheus scrapes `trainyard server`'s /metrics (text format 0.0.4) and answers queries
# about it: the scrape target is up, and the POST that created a job is counted with its route.
#   prometheus_scrape_test.sh <path to trainyard>
# Prints "SKIPPED: ..." and exits 0 without the Debian `prometheus` package.
set -euo pipefail
trainyard=$1
command -v prometheus >/dev/null || { echo "SKIPPED: prometheus not installed (apt-get install prometheus; scripts/install-deps.sh --test)"; exit 0; }
command -v curl >/dev/null || { echo "SKIPPED: curl not installed"; exit 0; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

"$trainyard" server --port 0 --executor fake --store memory --data-dir "$work/server" >"$work/server.out" 2>"$work/server.err" &
pids+=($!)
for _ in $(seq 1 100); do grep -q 'listening on' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
endpoint=$(sed -n 's/.*listening on http:\/\/\([^ ]*\).*/\1/p' "$work/server.out")
[[ -n $endpoint ]] || { echo "FAIL: server did not start"; cat "$work/server.err"; exit 1; }
curl -sf -X POST "http://$endpoint/v1/projects/p/locations/us-central1/customJobs" -H 'Content-Type: application/json' \
  -d '{"displayName":"scraped","jobSpec":{"workerPoolSpecs":[{"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1","containerSpec":{"imageUri":"local","command":["true"]}}]}}' >/dev/null

prom_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: trainyard
    static_configs:
      - targets: ["$endpoint"]
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)

query() { curl -sf --get "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" || true; }
up="" posted=""
for _ in $(seq 1 120); do
  up=$(query 'up{job="trainyard"}')
  posted=$(query 'trainyard_http_requests_total{method="POST",route="/v1/projects/{p}/locations/{l}/customJobs",code="200"}')
  if [[ $up == *'"1"]'* && $posted == *'"1"]'* ]]; then
    echo "ok: Prometheus scraped /metrics: up=1, POST customJobs counted once"
    query 'trainyard_jobs' | head -c 600; echo
    exit 0
  fi
  sleep 0.5
done
echo "FAIL: Prometheus did not report the metrics"
echo "up: $up"
echo "posted: $posted"
curl -s "http://127.0.0.1:$prom_port/api/v1/targets" | head -c 2000; echo
tail -20 "$work/prometheus.log"
exit 1
