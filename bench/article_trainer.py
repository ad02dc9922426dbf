"""The Hugging Face Trainer variant of the article's pipeline (seed 002: Google's "PyTorch on
Google Cloud" sentiment trainer, fine-tuning BERT with `Trainer`), run the way that code runs it:
a fast `AutoTokenizer`, the CSVs read with `datasets` and tokenized once up front with
`Dataset.map(batched=True)` padding to max_length, `AutoModelForSequenceClassification` on the
checkpoint, `TrainingArguments` with an evaluation each epoch and weight decay 0.01,
`default_data_collator`, an accuracy `compute_metrics`, `trainer.train()`, then the test split
evaluated and the model saved (`trainer.save_model`) as that code does at its end.

What differs from that code: the data are our CSV splits (`--training-file` and the others; it
loads IMDB from the hub), the checkpoint is --bert-dir (it downloads bert-base-cased), the
hyperparameters are flags so that bench/anchor_finetune.sh gives every pipeline the same ones
(its defaults are lr 2e-5, batch 16, 1 epoch), checkpoints are not written during training
(`save_strategy="no"`: its default would write one at step 500, which a 3-epoch UCI run never
reaches) and no logger integration is loaded (`report_to="none"`). The end prints one JSON line
like bench/article_main.py.

Run with the `current` venv set (today's transformers over PyPI's torch):
  TRAINYARD_VENV_SET=current scripts/venv-python.sh bench/article_trainer.py --bert-dir DIR \\
      --training-file train.csv --validation-file val.csv --testing-file test.csv
"""
import json
import os
import shutil
import tempfile
import time

STARTED = time.time()

import article_args  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from datasets import load_dataset  # noqa: E402
from transformers import (  # noqa: E402
    AutoModelForSequenceClassification,
    AutoTokenizer,
    EvalPrediction,
    Trainer,
    TrainingArguments,
    default_data_collator,
)


def compute_metrics(p: EvalPrediction):
    preds = p.predictions[0] if isinstance(p.predictions, tuple) else p.predictions
    return {"accuracy": float((np.argmax(preds, axis=1) == p.label_ids).mean())}


def load_splits(args, tokenizer):
    files = {"train": args.training_file, "validation": args.validation_file,
             "test": args.testing_file}
    raw = load_dataset("csv", data_files=files)
    labels = sorted(set(raw["train"][args.label_column]))
    label_to_id = {label: i for i, label in enumerate(labels)}

    def preprocess(examples):
        result = tokenizer(examples[args.text_column], padding="max_length",
                           max_length=args.max_length, truncation=True)
        result["label"] = [label_to_id[label] for label in examples[args.label_column]]
        return result

    columns = raw["train"].column_names
    return raw.map(preprocess, batched=True, remove_columns=columns), len(labels)


def main():
    p = article_args.parser(max_length=64)
    p.add_argument("--weight-decay", type=float, default=0.01)
    args = p.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.bert_dir, use_fast=True)
    data, num_labels = load_splits(args, tokenizer)
    model = AutoModelForSequenceClassification.from_pretrained(args.bert_dir,
                                                               num_labels=num_labels)
    out = tempfile.mkdtemp(prefix="article-trainer-")
    training_args = TrainingArguments(
        output_dir=out, eval_strategy="epoch", save_strategy="no", report_to="none",
        learning_rate=args.learning_rate, per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size, num_train_epochs=args.epochs,
        weight_decay=args.weight_decay, seed=args.seed, use_cpu=not torch.cuda.is_available())
    trainer = Trainer(model, training_args, train_dataset=data["train"],
                      eval_dataset=data["validation"], data_collator=default_data_collator,
                      processing_class=tokenizer, compute_metrics=compute_metrics)
    trained = trainer.train()
    test = trainer.evaluate(data["test"], metric_key_prefix="test")
    trainer.save_model(os.path.join(out, "model"))
    print(json.dumps({"pipeline": "article-trainer-transformers", "seed": args.seed,
                      "test_accuracy": test["test_accuracy"],
                      "train_samples_per_second": trained.metrics["train_samples_per_second"],
                      "end_to_end_seconds": time.time() - STARTED,
                      "epoch_seconds": trained.metrics["train_runtime"],
                      "torch": torch.__version__, "transformers": transformers.__version__,
                      "threads": torch.get_num_threads()}))
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
