#!/usr/bin/python3
"""Predict parity fixture: HF-style model directories plus the probabilities `trainyard-bert
predict` must print for given texts, computed independently (bert_reference.py's float64 forward).

Writes OUT/safetensors/ and OUT/bin/ (config.json + weights + vocab.txt) and OUT/expected.json:
{"texts": [...], "labels": [...], "probabilities": [[...], ...]}. The vocab is
[PAD] [UNK] [CLS] [SEP] [MASK] w5 ... w96, so the text "w7 w12" is [CLS] w7 w12 [SEP] =
ids [2, 7, 12, 3] with no WordPiece ambiguity; each text is run alone (no padding).

Run with Debian's /usr/bin/python3 (python3-torch); exit code 77 when torch is missing.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bert_reference as ref  # noqa: E402  (exits 77 without torch)
import torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    cfg = dict(ref.CONFIG)
    gen = torch.Generator().manual_seed(3)
    weights = ref.random_weights(cfg, len(cfg["id2label"]), gen)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(5, cfg["vocab_size"])]
    for sub, fmt in (("safetensors", "safetensors"), ("bin", "bin")):
        ref.write_dir(os.path.join(args.out, sub), cfg, weights, fmt)
        with open(os.path.join(args.out, sub, "vocab.txt"), "w") as f:
            f.write("\n".join(vocab) + "\n")
    texts, probabilities = [], []
    for n in (1, 3, 7, 20, 36):
        ids = [int(x) for x in torch.randint(5, cfg["vocab_size"], (n,), generator=gen)]
        texts.append(" ".join(f"w{i}" for i in ids))
        input_ids = torch.tensor([[2] + ids + [3]])
        logits, _ = ref.forward(cfg, weights, input_ids, torch.ones_like(input_ids), torch.zeros_like(input_ids))
        probabilities.append(torch.softmax(logits[0].double(), 0).tolist())
    labels = [cfg["id2label"][str(i)] for i in range(len(cfg["id2label"]))]
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump({"texts": texts, "labels": labels, "probabilities": probabilities}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
