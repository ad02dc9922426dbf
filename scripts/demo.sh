#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install, build, fetch the UCI sentiment sample,
# make stratified splits, and run the sample job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/fetch-sample-data.sh
scripts/build.sh
BIN=build/tools
OUT=${DEMO_DIR:-data/demo}
rm -rf "$OUT"
echo "== make-splits =="
"$BIN/trainyard-bert" make-splits --output-dir "$OUT/splits" --text-column text --label-column label \
  --seed 42 data/sample/uci_sentiment.csv
