"""Entry point: `python -m trainer.task ARGS` (the package's --module-name)."""

import argparse

from trainer import experiment


def get_args():
    parser = argparse.ArgumentParser(description="Fine-tune BERT for sentiment classification")
    parser.add_argument("--job-dir", default="",
                        help="gs:// or local directory for outputs (AI Platform passes it)")
    parser.add_argument("--model-name", default="finetuned-bert-classifier")
    parser.add_argument("--train-file", required=True,
                        help="CSV with text and label columns (gs:// or local path)")
    parser.add_argument("--vocab-file", default="",
                        help="WordPiece vocab (gs:// or local); default: the checkpoint's")
    parser.add_argument("--model-dir", default="",
                        help="a pretrained checkpoint (config.json + weights) to fine-tune; "
                             "default: a BERT-Tiny built from its config")
    parser.add_argument("--test-split", type=float, default=0.1)
    parser.add_argument("--max-seq-length", type=int, default=64)
    parser.add_argument("--num-epochs", type=float, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=2e-5)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def main():
    experiment.run(get_args())


if __name__ == "__main__":
    main()
