#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine, end to end, as a user would run it:
#   install + build, fetch the UCI sentiment sample (npm), make stratified splits, start the
#   Trainyard server (SQLite store, local executor), upload the splits to gs://demo-bucket,
#   submit the BERT sentiment job exactly like the article's job.sh (`gcloud ai` -> `trainyard ai`),
#   stream its logs, print its final state, test metrics and estimated cost, predict two texts.
# Everything it writes lives under data/demo/ (DEMO_DIR overrides). DEMO_EPOCHS (default 3).
# DEMO_CONTAINER=1: the article's image flow instead of the built-in trainer: a loopback registry
#   (scripts/registry-local.sh), the trainyard/bert-sentiment base image (scripts/build-images.sh),
#   the user's Containerfile built and pushed as pt_bert_sentiment:dev, and job.sh with
#   IMAGE_URI=eu.gcr.io/$PROJECT_ID/pt_bert_sentiment:dev, run as a podman container (root, podman,
#   runc, docker-registry; docs/containers.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/fetch-sample-data.sh
bash scripts/build.sh --target trainyard trainyard-bert  # only what the demo runs

ROOT=$PWD
export PATH="$ROOT/build/tools:$PATH"
DEMO=$ROOT/${DEMO_DIR:-data/demo}
rm -rf "$DEMO"
mkdir -p "$DEMO"
export TRAINYARD_BUCKET_ROOT=$DEMO/buckets

echo "== 1. make-splits (stratified 80/10/10, seed 42)"
trainyard-bert make-splits --output-dir "$DEMO/splits" --text-column text --label-column label \
  --seed 42 data/sample/uci_sentiment.csv

IMAGE_URI="trainyard/bert-sentiment"  # the built-in trainer (image catalog: a host command)
registry_started=0
if [[ ${DEMO_CONTAINER:-0} == 1 ]]; then
  echo "== 1b. the article's image: Containerfile -> podman build -> podman push"
  bash scripts/registry-local.sh start
  registry_started=1
  eval "$(bash scripts/registry-local.sh env)"
  TRAINYARD_BERT=build/tools/trainyard-bert bash scripts/build-images.sh bert-sentiment
  mkdir -p "$DEMO/image"
  # The user's Containerfile: the trainer image with `train` as its entrypoint, like main.py.
  printf 'FROM localhost/trainyard/bert-sentiment:latest\nENTRYPOINT ["/usr/local/bin/trainyard-bert", "train"]\n' \
    >"$DEMO/image/Containerfile"
  export PROJECT_ID=my-project
  podman build -t "$TRAINYARD_REGISTRY/pt_bert_sentiment:dev" "$DEMO/image"
  podman push "$TRAINYARD_REGISTRY/pt_bert_sentiment:dev"
  # The article's name, unchanged: the rewrite table maps eu.gcr.io/*/NAME to $TRAINYARD_REGISTRY.
  IMAGE_URI="eu.gcr.io/$PROJECT_ID/pt_bert_sentiment:dev"
fi

echo "== 2. start the server (embedded SQLite in $DEMO/server, local executor)"
# A root server runs replicas as `nobody` (docs/security.md). That needs a checkout `nobody` can
# reach; a clone under a private home (/root is 0700) cannot be, and then the demo lets its
# replicas run as root, saying so.
server_flags=()
if [[ $(id -u) == 0 ]] && ! runuser -u nobody -- test -x "$ROOT/build/tools/trainyard-bert" -a -r "$DEMO/splits/train.csv"; then
  echo "   (the checkout is not reachable for 'nobody': replicas run as root, --allow-root-replicas)"
  server_flags+=(--allow-root-replicas)
fi
trainyard server --port 0 --data-dir "$DEMO/server" "${server_flags[@]}" >"$DEMO/server.out" 2>"$DEMO/server.err" &
SERVER_PID=$!
cleanup() {
  kill $SERVER_PID 2>/dev/null || true
  wait $SERVER_PID 2>/dev/null || true
  if [[ $registry_started == 1 ]]; then bash scripts/registry-local.sh stop || true; fi
}
trap cleanup EXIT
for _ in $(seq 1 100); do
  grep -q 'listening on' "$DEMO/server.out" 2>/dev/null && break
  kill -0 $SERVER_PID 2>/dev/null || { cat "$DEMO/server.err" >&2; exit 1; }
  sleep 0.1
done
export TRAINYARD_ENDPOINT=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$DEMO/server.out")
[[ -n $TRAINYARD_ENDPOINT ]] || { echo "server did not start" >&2; cat "$DEMO/server.err" >&2; exit 1; }
echo "server at $TRAINYARD_ENDPOINT"
echo "== open the web console now to watch the job appear and its loss curve grow:"
echo "   $TRAINYARD_ENDPOINT/"

echo "== 3. upload the data"
export BUCKET=demo-bucket
# Buckets exist only once created (a typo in a bucket name is an error, not a new bucket); a
# rerun on the same data dir finds it there already.
trainyard storage ls "gs://$BUCKET" >/dev/null 2>&1 || trainyard storage buckets create "gs://$BUCKET"
trainyard storage cp "$DEMO/splits/train.csv" "$DEMO/splits/eval.csv" "$DEMO/splits/test.csv" \
  "$DEMO/splits/labels.json" "gs://$BUCKET/data/"
trainyard storage cp data/sample/vocab.txt "gs://$BUCKET/vocab.txt"

echo "== 4. submit the job (the article's job.sh; image $IMAGE_URI)"
export REGION="europe-west4"
export JOB_NAME="pytorch_bert_training"
export MACHINE_TYPE="n1-standard-4"
export IMAGE_URI
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

# Run from a terminal, the server (and its console) stays up until Enter, so the job's page,
# curves and logs can be browsed; unattended runs (CI, pipes) end here.
if [[ -t 0 && -t 1 ]]; then
  echo "== the console stays up at $TRAINYARD_ENDPOINT/#/$JOB"
  read -r -p "   press Enter to stop the server and end the demo " _
fi
