#!/usr/bin/env bash
# The native model server (`trainyard-bert serve`) and TorchServe side by side, in one run on this
# machine with the same model directory: serve_bench drives each at 1 and 16 concurrent clients
# (one text per request, keep-alive) and prints requests/s, p50 and p99; a summary table and the
# ratios against the goal (native >= 5x TorchServe's requests/s at 16 clients, <= 1/5 of its p50
# at 1 client) come last. It measures; it checks no threshold.
#
#   bench/serve_vs_torchserve.sh --model-dir DIR [--clients 1,16] [--seconds 8] [--warmup 2]
#       [--threads 2] [--max-batch-size 32] [--batch-delay-ms 1] [--torchserve-threads "2 1"]
#       [--trainyard-bert build/tools/trainyard-bert] [--serve-bench build/bench/serve_bench]
#
# DIR: what `trainyard-bert train` exports (config.json, model.safetensors, vocab.txt,
# labels.json). Needs scripts/install-deps.sh --bench (a JDK and the torchserve venv).
#
# Settings, the same for both where the servers allow it: one model worker (TorchServe:
# minWorkers = maxWorkers = 1), --max-batch-size texts per forward pass, --threads torch threads
# (bench/torchserve/handler.py sets them in TorchServe's worker). Batch delay: TorchServe takes
# its maxBatchDelay from model-config.yaml or config.properties only when it is > 0 (0 there
# means its default, 100 ms), and at 0 its batch loop would stop after two requests; so it runs
# at --batch-delay-ms (default 1, the smallest it accepts), and the native server twice: at its
# default 0 and at the same delay. TorchServe keeps its defaults otherwise (token auth on: the
# bench sends the inference key; per-request access and metrics logs), except that its system
# metrics collector, a Python process every minute, is off, to keep the two cores for the servers.
#
# TorchServe runs once per --torchserve-threads value (default: --threads, and 1): on the 2-core
# development machine its worker served 3.5-8x more requests/s with 1 torch thread than with 2
# (the worker's OpenMP threads spin while they wait, on the cores its Java frontend needs), and 1
# is what Debian's torch starts with there, so TorchServe's default and best setting is measured too.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

model_dir="" clients=1,16 seconds=8 warmup=2 threads=2 batch=32 ts_delay=1 ts_threads=""
trainyard_bert=$repo/build/tools/trainyard-bert
serve_bench=$repo/build/bench/serve_bench
venv=${TRAINYARD_VENV:-$repo/.venv-torchserve}
usage() {
  sed -n '8,10p' "$0" | sed 's/^# *//' >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case $1 in
    --model-dir) model_dir=$2 ;;
    --clients) clients=$2 ;;
    --seconds) seconds=$2 ;;
    --warmup) warmup=$2 ;;
    --threads) threads=$2 ;;
    --max-batch-size) batch=$2 ;;
    --batch-delay-ms) ts_delay=$2 ;;
    --torchserve-threads) ts_threads=$2 ;;
    --trainyard-bert) trainyard_bert=$2 ;;
    --serve-bench) serve_bench=$2 ;;
    *) usage ;;
  esac
  shift 2 || usage
done

die() {
  echo "serve_vs_torchserve: $*" >&2
  exit 1
}
[[ -n $model_dir ]] || usage
ts_threads=${ts_threads:-$threads $( ((threads == 1)) || echo 1)}
model_dir=$(cd "$model_dir" && pwd) || die "--model-dir $model_dir: no such directory"
for f in config.json model.safetensors vocab.txt labels.json; do
  [[ -f $model_dir/$f ]] || die "$model_dir has no $f (trainyard-bert train exports it)"
done
[[ $ts_delay =~ ^[1-9][0-9]*$ ]] || die "--batch-delay-ms: TorchServe takes a whole number >= 1"
[[ -x $trainyard_bert ]] || die "$trainyard_bert is missing: build it (scripts/build.sh)"
[[ -x $serve_bench ]] || die "$serve_bench is missing: cmake --build build --target serve_bench"
[[ -x $venv/bin/torchserve ]] || die "no TorchServe in $venv: scripts/install-deps.sh --bench"
command -v java >/dev/null || die "no java on PATH (TorchServe's frontend): scripts/install-deps.sh --bench"
command -v curl >/dev/null || die "curl is missing: apt-get install curl"

tmp=$(mktemp -d)
ts_java="" native_pid=""
stop_pid() {  # SIGTERM, then up to 30 s for the process to exit
  [[ -n $1 ]] && kill -0 "$1" 2>/dev/null || return 0
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 300); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$1" 2>/dev/null || true
}
cleanup() {
  stop_pid "$ts_java"
  stop_pid "$native_pid"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  "$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
results=$tmp/results.jsonl
# Runs serve_bench (the flags after the first three) and appends its JSON line, tagged with
# SERVER, THREADS and DELAY, to results.
bench() {
  local server=$1 threads=$2 delay=$3
  shift 3
  echo "== $server, $threads torch threads, batch delay $delay ms"
  "$serve_bench" --clients "$clients" --seconds "$seconds" --warmup "$warmup" "$@" | tee "$tmp/out"
  tail -1 "$tmp/out" | "$venv/bin/python" -c 'import json, sys
row = json.load(sys.stdin)
row["server"], row["threads"], row["delay_ms"] = sys.argv[1:4]
print(json.dumps(row))' "$server" "$threads" "$delay" >>"$results"
}

echo "serve_vs_torchserve: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load$(uptime | sed 's/.*load/ load/;s/load average//')"
echo "  torchserve $("$venv/bin/python" -c 'import ts.version; print(ts.version.__version__)')," \
  "torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)')," \
  "transformers $("$venv/bin/python" -c 'import transformers; print(transformers.__version__)')," \
  "$(java -version 2>&1 | head -1)"
echo "  model $model_dir; batch $batch, threads $threads, 1 worker; clients $clients, ${seconds} s after ${warmup} s"

# --- TorchServe with THREADS torch threads: archive, config, start, wait, describe, bench, stop.
name=bert
key() {  # the key TorchServe made in directory $1 for its API $2 (inference, management)
  "$venv/bin/python" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]["key"])' \
    "$1/key_file.json" "$2"
}
run_torchserve() {
  local threads=$1 dir=$tmp/torchserve-$1
  mkdir -p "$dir/store" "$dir/logs"
  cat >"$dir/model-config.yaml" <<EOF
minWorkers: 1
maxWorkers: 1
batchSize: $batch
maxBatchDelay: $ts_delay
responseTimeout: 120
handler:
  threads: $threads
EOF
  "$venv/bin/torch-model-archiver" --model-name "$name" --version 1.0 \
    --handler "$repo/bench/torchserve/handler.py" --config-file "$dir/model-config.yaml" \
    --extra-files "$model_dir/config.json,$model_dir/model.safetensors,$model_dir/vocab.txt,$model_dir/labels.json" \
    --export-path "$dir/store"
  local port mgmt metrics
  port=$(free_port) mgmt=$(free_port) metrics=$(free_port)
  cat >"$dir/config.properties" <<EOF
inference_address=http://127.0.0.1:$port
management_address=http://127.0.0.1:$mgmt
metrics_address=http://127.0.0.1:$metrics
model_store=$dir/store
load_models=$name.mar
default_workers_per_model=1
disable_system_metrics=true
EOF
  # TorchServe writes key_file.json into its working directory and its pid file (the JVM's pid)
  # into TMPDIR: both into $dir, so nothing else on the machine is touched or read.
  (cd "$dir" && TMPDIR=$dir LOG_LOCATION=$dir/logs METRICS_LOCATION=$dir/logs \
    exec "$venv/bin/torchserve" --foreground --ncs --ts-config "$dir/config.properties" \
    --model-store "$dir/store" >"$dir/torchserve.log" 2>&1) &
  local launcher=$! started
  started=$(date +%s)
  until [[ -f $dir/key_file.json ]] &&
    [[ $(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(key "$dir" inference)" \
      --data 'warm up' "http://127.0.0.1:$port/predictions/$name") == 200 ]]; do
    kill -0 "$launcher" 2>/dev/null || { tail -30 "$dir/torchserve.log" >&2; die "TorchServe exited while starting"; }
    (($(date +%s) - started < 180)) || { tail -30 "$dir/torchserve.log" >&2; die "TorchServe not ready after 180 s"; }
    sleep 0.5
  done
  ts_java=$(cat "$dir/.model_server.pid")
  echo "TorchServe ready in $(($(date +%s) - started)) s; as it describes the model:"
  curl -s -H "Authorization: Bearer $(key "$dir" management)" "http://127.0.0.1:$mgmt/models/$name" |
    "$venv/bin/python" -c 'import json, sys
m = json.load(sys.stdin)[0]
print("  batchSize %s, maxBatchDelay %s ms, workers %s (%s)" % (m["batchSize"], m["maxBatchDelay"],
      len(m["workers"]), ", ".join(w["status"] for w in m["workers"])))'
  bench torchserve "$threads" "$ts_delay" --url "http://127.0.0.1:$port/predictions/$name" \
    --format raw --header "Authorization: Bearer $(key "$dir" inference)"
  stop_pid "$ts_java"
  wait "$launcher" 2>/dev/null || true
  ts_java=""
}
for t in $ts_threads; do run_torchserve "$t"; done

# --- trainyard-bert serve at its default delay (0) and at TorchServe's.
for delay in 0 "$ts_delay"; do
  : >"$tmp/native.log"
  "$trainyard_bert" serve --model-dir "$model_dir" --host 127.0.0.1 --port 0 \
    --max-batch-size "$batch" --batch-delay-ms "$delay" --threads "$threads" 2>"$tmp/native.log" &
  native_pid=$!
  started=$(date +%s)
  until grep -q '; ready' "$tmp/native.log"; do
    kill -0 "$native_pid" 2>/dev/null || { cat "$tmp/native.log" >&2; die "trainyard-bert serve exited while starting"; }
    (($(date +%s) - started < 60)) || die "trainyard-bert serve not ready after 60 s"
    sleep 0.1
  done
  port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/native.log" | head -1)
  bench trainyard-bert "$threads" "$delay" --url "http://127.0.0.1:$port/v1/endpoints//deployedModels/:predict"
  stop_pid "$native_pid"
  wait "$native_pid" 2>/dev/null || true
  native_pid=""
done

echo "load after the run:$(uptime | sed 's/.*load average//')"
"$venv/bin/python" - "$results" <<'EOF'
import json, sys

rows = [json.loads(line) for line in open(sys.argv[1])]
print("\n| server | torch threads | batch delay | clients | requests/s | p50 ms | p99 ms | errors |")
print("|---|---|---|---|---|---|---|---|")
for row in rows:
    for r in row["results"]:
        print("| %s | %s | %s ms | %d | %.0f | %.2f | %.2f | %d |" % (row["server"], row["threads"],
              row["delay_ms"], r["clients"], r["requests_per_s"], r["p50_ms"], r["p99_ms"],
              r["errors"]))


def at(row, clients):
    return next((r for r in row["results"] if r["clients"] == clients), None)


print("\nnative against TorchServe (goal: >= 5x its requests/s at 16 clients, <= 0.2x its p50 at 1):")
for native in (row for row in rows if row["server"] != "torchserve"):
    for ts in (row for row in rows if row["server"] == "torchserve"):
        line = "  native at delay %s ms vs TorchServe with %s threads:" % (native["delay_ms"],
                                                                          ts["threads"])
        n16, t16, n1, t1 = at(native, 16), at(ts, 16), at(native, 1), at(ts, 1)
        if n16 and t16 and t16["requests_per_s"] > 0:
            line += " %.1fx requests/s at 16 clients;" % (n16["requests_per_s"] / t16["requests_per_s"])
        if n1 and t1 and t1["p50_ms"] > 0:
            line += " %.3fx p50 at 1 client" % (n1["p50_ms"] / t1["p50_ms"])
        print(line)
EOF
