#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine, end to end, as a user would run it:
#   install + build, fetch the UCI sentiment sample (npm), make stratified splits, start the
#   Trainyard server (SQLite store, local executor), upload the splits to gs://demo-bucket,
#   submit the BERT sentiment job exactly like the article's job.sh (`gcloud ai` -> `trainyard ai`),
#   stream its logs, print its final state, test metrics and estimated cost, predict two texts.
# Everything it writes lives under data/demo/ (DEMO_DIR overrides). DEMO_EPOCHS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/fetch-sample-data.sh
bash scripts/build.sh

ROOT=$PWD
export PATH="$ROOT/build/tools:$PATH"
DEMO=$ROOT/${DEMO_DIR:-data/demo}
rm -rf "$DEMO"
mkdir -p "$DEMO"
export TRAINYARD_BUCKET_ROOT=$DEMO/buckets

echo "== 1. make-splits (stratified 80/10/10, seed 42)"
trainyard-bert make-splits --output-dir "$DEMO/splits" --text-column text --label-column label \
  --seed 42 data/sample/uci_sentiment.csv

echo "== 2. start the server (embedded SQLite in $DEMO/server, local executor)"
trainyard server --port 0 --data-dir "$DEMO/server" >"$DEMO/server.out" 2>"$DEMO/server.err" &
SERVER_PID=$!
trap 'kill $SERVER_PID 2>/dev/null || true; wait $SERVER_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q 'listening on' "$DEMO/server.out" 2>/dev/null && break
  kill -0 $SERVER_PID 2>/dev/null || { cat "$DEMO/server.err" >&2; exit 1; }
  sleep 0.1
done
export TRAINYARD_ENDPOINT=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$DEMO/server.out")
[[ -n $TRAINYARD_ENDPOINT ]] || { echo "server did not start" >&2; cat "$DEMO/server.err" >&2; exit 1; }
echo "server at $TRAINYARD_ENDPOINT"

echo "== 3. upload the data"
export BUCKET=demo-bucket
trainyard storage cp "$DEMO/splits/train.csv" "$DEMO/splits/eval.csv" "$DEMO/splits/test.csv" \
  "$DEMO/splits/labels.json" "gs://$BUCKET/data/"
trainyard storage cp data/sample/vocab.txt "gs://$BUCKET/vocab.txt"

echo "== 4. submit the job (the article's job.sh; the built-in trainer image)"
export REGION="europe-west4"
export JOB_NAME="pytorch_bert_training"
export MACHINE_TYPE="n1-standard-4"
export IMAGE_URI="trainyard/bert-sentiment"
trainyard ai custom-jobs create \
--region=$REGION \
--display-name=$JOB_NAME \
--worker-pool-spec=machine-type=$MACHINE_TYPE,replica-count=1,container-image-uri=$IMAGE_URI \
--args=\
--training-file=gs://$BUCKET/data/train.csv,\
--validation-file=gs://$BUCKET/data/eval.csv,\
--testing-file=gs://$BUCKET/data/test.csv,\
--job-dir=gs://$BUCKET/model,\
--tensorboard-dir=gs://$BUCKET/model/logs,\
--epochs=${DEMO_EPOCHS:-3},\
--batch-size=32,\
--learning-rate=0.0005,\
--text-column=text,\
--vocab=gs://$BUCKET/vocab.txt 2>&1 | tee "$DEMO/create.out"
JOB=$(sed -n 's/.*CustomJob \[\([^]]*\)\].*/\1/p' "$DEMO/create.out" | head -n 1)
[[ -n $JOB ]] || { echo "could not read the job name from the create output" >&2; exit 1; }

echo "== watch it in the web console (loss curve, logs): $TRAINYARD_ENDPOINT/#/$JOB"
echo "== 5. stream the logs of $JOB"
trainyard ai custom-jobs stream-logs "$JOB"

echo "== 6. final state"
trainyard ai custom-jobs describe "$JOB" --format=json >"$DEMO/job.json"
node -e '
  const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`state: ${j.state}`);
  if (j.error) console.log(`error: ${j.error.message}`);
  const info = j.trainyardInfo || {};
  const secs = (Date.parse(j.endTime) - Date.parse(j.startTime)) / 1000;
  console.log(`run time: ${secs.toFixed(1)} s on ${j.jobSpec.workerPoolSpecs[0].machineSpec.machineType}`);
  console.log(`estimated cost: $${(info.estimatedCostUsd || 0).toFixed(6)} ` +
              `(at $${info.hourlyCostUsd}/h, the cloud price of the requested machines)`);
' "$DEMO/job.json"
grep -q '"JOB_STATE_SUCCEEDED"' "$DEMO/job.json" || { echo "the job did not succeed" >&2; exit 1; }

echo "== 7. test metrics ($TRAINYARD_BUCKET_ROOT/$BUCKET/model/metrics.json)"
node -e '
  const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const t = m.test || m;
  console.log(JSON.stringify({accuracy: t.accuracy, macro_f1: t.macro_f1, loss: t.loss}));
' "$TRAINYARD_BUCKET_ROOT/$BUCKET/model/metrics.json"

echo "== 8. predict"
trainyard-bert predict --model-dir "$TRAINYARD_BUCKET_ROOT/$BUCKET/model" \
  --text "The food was great and the staff were lovely." \
  --text "Terrible phone, it broke after two days."
