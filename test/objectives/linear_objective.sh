#!/usr/bin/env bash
# A tiny HP-tuning objective for tests: reads --x=N [--steps=S] [--step-seconds=T], reports
# objective = x + 1/step at steps 1..S in the cloudml-hypertune file format to
# $CLOUD_ML_HP_METRIC_FILE (rewriting the whole file each time, as the library does) and as
# `objective=...` on stdout. Exits 3 when $CLOUD_ML_TRIAL_ID equals $FAIL_TRIAL (a failing
# trial); exits 143 on SIGTERM (the trainer's checkpoint-and-exit). At the end it writes
# model.txt (x=N) into $AIP_MODEL_DIR.
set -u
x=""; steps=8; step_seconds=0.25
for arg in "$@"; do
  case "$arg" in
    --x=*) x="${arg#--x=}" ;;
    --steps=*) steps="${arg#--steps=}" ;;
    --step-seconds=*) step_seconds="${arg#--step-seconds=}" ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
if [[ -z "$x" ]]; then echo "missing --x" >&2; exit 2; fi
trial="${CLOUD_ML_TRIAL_ID:-0}"
if [[ "$trial" == "${FAIL_TRIAL:-none}" ]]; then echo "trial $trial: simulated crash" >&2; exit 3; fi
trap 'echo "trial $trial: SIGTERM, stopping"; exit 143' TERM
file="${CLOUD_ML_HP_METRIC_FILE:?CLOUD_ML_HP_METRIC_FILE is not set}"
mkdir -p "$(dirname "$file")"
lines=""
for ((step = 1; step <= steps; step++)); do
  value=$(awk -v x="$x" -v s="$step" 'BEGIN { printf "%.6f", x + 1.0 / s }')
  now=$(date +%s.%N)
  lines+="{\"global_step\": \"$step\", \"objective\": \"$value\", \"timestamp\": $now, \"trial\": \"$trial\"}"$'\n'
  printf '%s' "$lines" > "$file.tmp" && mv "$file.tmp" "$file"
  echo "step=$step objective=$value"
  sleep "$step_seconds" & wait $!
done
# The "model": x, in AIP_MODEL_DIR (gs:// mapped through TRAINYARD_BUCKET_ROOT, as the trainer does).
if [[ -n "${AIP_MODEL_DIR:-}" ]]; then
  model_dir="$AIP_MODEL_DIR"
  if [[ "$model_dir" == gs://* ]]; then model_dir="${TRAINYARD_BUCKET_ROOT:?}/${model_dir#gs://}"; fi
  mkdir -p "$model_dir" && echo "x=$x" > "$model_dir/model.txt"
fi
echo "trial $trial done"
