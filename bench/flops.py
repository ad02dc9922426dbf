"""Training FLOPs of a BERT sequence classifier on a CSV, counted analytically, and the fraction of
the machine's peak that a measured rate is.

The count is the usual model-FLOPs one (PaLM's appendix B, as MFU is reported), on the real tokens
of each text (what length grouping computes; fixed padding computes more, which lowers its
fraction): a training step costs 3 forward passes (the backward is two), and one forward pass
per token costs 2 FLOPs per non-embedding weight (the encoder's 12*H^2 + 13*H per layer, pooler
and head) plus the attention products, 4*n*H per layer for a text of n tokens (QK^T and AV).
So one text of n tokens costs, to train,

    6 * N * n + 12 * L * H * n^2        N = L*(12*H^2 + 13*H) + H^2 + H + C*(H + 1)

and to evaluate a third of that. Embedding lookups, LayerNorm, softmax, GELU and the optimizer are
not counted (memory-bound, a few percent).

  python3 bench/flops.py --config DIR/config.json --vocab VOCAB --csv train.csv
                         [--text-column text] [--max-length 64] [--labels 2]
                         [--seconds S --train-rows R --eval-rows E --epochs K] [--peak-gflops P]

With --seconds (the run's training+validation time for K epochs of R train and E eval rows) it
prints the achieved GFLOP/s, and with --peak-gflops (build/bench/cpu_peak_bench) the fraction.
Tokenizes with trainyard's rules through transformers' BertTokenizer when it is installed (the
anchors venv), else a whitespace split (an underestimate, said so).
"""
import argparse
import csv
import json


def token_counts(path, column, vocab, max_length):
    with open(path, newline="", encoding="utf-8") as f:
        texts = [row[column] for row in csv.DictReader(f)]
    try:
        from transformers import BertTokenizer
        tokenizer = BertTokenizer(vocab, do_lower_case=True)
        count = lambda t: len(tokenizer.tokenize(t)) + 2  # noqa: E731  [CLS] ... [SEP]
        how = "BertTokenizer"
    except ImportError:
        count = lambda t: len(t.split()) + 2  # noqa: E731
        how = "whitespace split (no transformers: an underestimate)"
    return [min(count(t), max_length) for t in texts], how


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", required=True)
    p.add_argument("--vocab", required=True)
    p.add_argument("--csv", required=True)
    p.add_argument("--text-column", default="text")
    p.add_argument("--max-length", type=int, default=64)
    p.add_argument("--labels", type=int, default=2)
    p.add_argument("--seconds", type=float)
    p.add_argument("--train-rows", type=int, default=2400)
    p.add_argument("--eval-rows", type=int, default=300)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--peak-gflops", type=float)
    args = p.parse_args()
    config = json.load(open(args.config))
    L, H = config["num_hidden_layers"], config["hidden_size"]
    I = config["intermediate_size"]
    # Per layer: QKV and output projections 4*H^2 + 4*H, FFN 2*H*I + I + H, two LayerNorms 4*H.
    per_layer = 4 * H * H + 4 * H + 2 * H * I + I + H + 4 * H
    N = L * per_layer + H * H + H + args.labels * (H + 1)
    counts, how = token_counts(args.csv, args.text_column, args.vocab, args.max_length)
    train_per_text = sum(6 * N * n + 12 * L * H * n * n for n in counts) / len(counts)
    out = {"layers": L, "hidden": H, "intermediate": I, "non_embedding_params": N,
           "mean_tokens": sum(counts) / len(counts), "tokenized_with": how,
           "train_gflop_per_text": train_per_text / 1e9}
    if args.seconds:
        total = args.epochs * (args.train_rows * train_per_text + args.eval_rows * train_per_text / 3)
        out["achieved_gflops"] = total / args.seconds / 1e9
        if args.peak_gflops:
            out["fraction_of_peak"] = out["achieved_gflops"] / args.peak_gflops
    print(json.dumps(out))


if __name__ == "__main__":
    main()
