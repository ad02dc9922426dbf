#!/usr/bin/env bash
# Batch prediction throughput with the native runtime: N texts (the UCI sample's sentences,
# repeated) scored by a BERT classifier, measured three ways in one run on this machine:
#   1. `trainyard-bert batch-predict` by hand, one shard (the replica's own loop: reading,
#      tokenizing, the model, writing);
#   2. a `batchPredictionJobs` create on a real `trainyard server` (local executor) with 1 and
#      with 2 replicas, from the create to SUCCEEDED as a client polling GET sees it (the backing
#      job's start, the replicas' model loads, the shards' move into the output directory);
# Each prints instances/s. It measures; it checks no threshold.
#
#   bench/batch_predict_bench.sh [--count 100000] [--model-dir DIR] [--max-length 64]
#       [--replicas "1 2"] [--build build]
#
# Without --model-dir it trains BERT-Tiny (the demo's default model) on the UCI sample for 1 epoch.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
count=100000 model_dir="" max_length=64 replicas="1 2" build=$repo/build
usage() {
  sed -n '11,12p' "$0" | sed 's/^# *//' >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case $1 in
    --count) count=$2 ;;
    --model-dir) model_dir=$2 ;;
    --max-length) max_length=$2 ;;
    --replicas) replicas=$2 ;;
    --build) build=$2 ;;
    *) usage ;;
  esac
  shift 2 || usage
done
bert=$build/tools/trainyard-bert
trainyard=$build/tools/trainyard
[[ -x $bert && -x $trainyard ]] || { echo "batch_predict_bench: build $bert and $trainyard first" >&2; exit 1; }
sample=$repo/data/sample/uci_sentiment.csv
[[ -f $sample ]] || { echo "batch_predict_bench: run scripts/fetch-sample-data.sh first" >&2; exit 1; }

work=$(mktemp -d /tmp/trainyard-batch-bench.XXXXXX)
server_pid=""
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
export TRAINYARD_BUCKET_ROOT=$work/buckets
mkdir -p "$TRAINYARD_BUCKET_ROOT"/{bench,models}
now() { date +%s.%N; }
# report LABEL COUNT T0 T1 [NOTE]
report() {
  python3 - "$@" <<'PY'
import sys
label, n, t0, t1 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
note = sys.argv[5] if len(sys.argv) > 5 else ""
print(f"{label:<24} {n:8d} predictions in {t1 - t0:6.2f} s = {n / (t1 - t0):7.0f} instances/s {note}")
PY
}

if [[ -z $model_dir ]]; then
  model_dir=$TRAINYARD_BUCKET_ROOT/models/bert
  "$bert" train --training-file "$sample" --validation-file "$sample" --text-column text \
    --label-column label --vocab "$repo/data/sample/vocab.txt" --job-dir "$model_dir" \
    --epochs 1 --max-length "$max_length" >"$work/train.log" 2>&1 ||
    { cat "$work/train.log" >&2; exit 1; }
else
  cp -r "$model_dir" "$TRAINYARD_BUCKET_ROOT/models/bert"
  model_dir=$TRAINYARD_BUCKET_ROOT/models/bert
fi

# N jsonl lines: the sample's sentences (column 1), JSON-quoted, repeated.
python3 - "$sample" "$count" >"$TRAINYARD_BUCKET_ROOT/bench/texts.jsonl" <<'PY'
import csv, json, sys
texts = [row[0] for row in csv.reader(open(sys.argv[1]))][1:]
n = int(sys.argv[2])
sys.stdout.write("".join(json.dumps(texts[i % len(texts)]) + "\n" for i in range(n)))
PY
echo "batch_predict_bench: $count texts, model $(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(c.get("num_hidden_layers"), "layers, hidden", c.get("hidden_size"))' "$model_dir/config.json"), max length $max_length, $(nproc) CPUs"

t0=$(now)
"$bert" batch-predict --model-dir "$model_dir" --input gs://bench/texts.jsonl \
  --output-dir gs://bench/by-hand --max-length "$max_length" 2>"$work/by-hand.log"
t1=$(now)
lines=$(wc -l <"$TRAINYARD_BUCKET_ROOT/bench/by-hand/prediction.results-00000-of-00001")
report "by hand, 1 shard:" "$lines" "$t0" "$t1"

# A root server runs replicas as `nobody`: they read the model and inputs and reach the data dir.
chmod -R a+rX "$work"
"$trainyard" server --port 0 --data-dir "$work/data" --executor local --gpus 0 \
  >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 100); do
  port=$(grep -o 'listening on http://[^ ]*' "$work/server.out" 2>/dev/null | sed 's/.*://') || true
  [[ -n ${port:-} ]] && break
  sleep 0.1
done
[[ -n ${port:-} ]] || { cat "$work/server.err" >&2; exit 1; }
api=http://127.0.0.1:$port/v1/projects/bench/locations/us-central1
model=$(curl -sf -X POST "$api/models:upload" -d '{"model": {"displayName": "bert", "artifactUri": "gs://models/bert"}}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["response"]["model"])')
for n in $replicas; do
  body=$(printf '{"displayName": "bench-%s", "model": "%s", "inputConfig": {"instancesFormat": "jsonl", "gcsSource": {"uris": ["gs://bench/texts.jsonl"]}}, "outputConfig": {"predictionsFormat": "jsonl", "gcsDestination": {"outputUriPrefix": "gs://bench/server-%s"}}, "dedicatedResources": {"machineSpec": {"machineType": "n1-standard-%s"}, "startingReplicaCount": %s}}' \
    "$n" "$model" "$n" "$((2 / n))" "$n")
  t0=$(now)
  name=$(curl -sf -X POST "$api/batchPredictionJobs" -d "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])')
  while :; do
    job=$(curl -sf "http://127.0.0.1:$port/v1/$name")
    state=$(echo "$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
    [[ $state == JOB_STATE_SUCCEEDED || $state == JOB_STATE_FAILED || $state == JOB_STATE_CANCELLED ]] && break
    sleep 0.05
  done
  t1=$(now)
  ok=$(echo "$job" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("completionStats", {}).get("successfulCount", 0))')
  report "server, $n replica(s):" "$ok" "$t0" "$t1" "($state)"
done
