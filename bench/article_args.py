"""The flags bench/article_main.py and bench/article_trainer.py share, so that
bench/anchor_finetune.sh gives every Python pipeline the same data, checkpoint and hyperparameters
(the defaults are the article's, but max length: 100 in main.py, 64 in the Trainer variant)."""
import argparse


def parser(max_length):
    p = argparse.ArgumentParser()
    p.add_argument("--bert-dir", required=True)
    p.add_argument("--training-file", required=True)
    p.add_argument("--validation-file", required=True)
    p.add_argument("--testing-file", required=True)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--learning-rate", type=float, default=5e-5)
    p.add_argument("--max-length", type=int, default=max_length)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--text-column", default="bodyText")
    p.add_argument("--label-column", default="Target")
    return p
