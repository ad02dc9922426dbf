"""Data in, model out: gs:// paths read and written through the bucket mount (/gcs in a container,
TRAINYARD_BUCKET_ROOT on a host), as Vertex's Cloud Storage FUSE mount does."""

import os
import shutil

from datasets import load_dataset
from transformers import BertTokenizerFast

from trainer import metadata


def local_path(uri):
    if not uri.startswith("gs://"):
        return uri
    rest = uri[len("gs://"):]
    for root in ("/gcs", os.environ.get("TRAINYARD_BUCKET_ROOT", "")):
        if root and os.path.isdir(os.path.join(root, rest.split("/", 1)[0])):
            return os.path.join(root, rest)
    raise SystemExit("%s: its bucket is not mounted here (no /gcs/%s, TRAINYARD_BUCKET_ROOT=%r)"
                     % (uri, rest.split("/", 1)[0], os.environ.get("TRAINYARD_BUCKET_ROOT")))


def load_tokenizer(args):
    vocab = local_path(args.vocab_file) if args.vocab_file else ""
    if vocab:
        return BertTokenizerFast(vocab_file=vocab, do_lower_case=True)
    return BertTokenizerFast.from_pretrained(local_path(args.model_dir))


def load_data(args, tokenizer):
    """The CSV through datasets' csv builder, split into train and test, tokenized."""
    data = load_dataset("csv", data_files=local_path(args.train_file), split="train")
    data = data.filter(lambda row: row[metadata.TEXT_COLUMN] is not None)
    splits = data.train_test_split(test_size=args.test_split, seed=args.seed)

    def tokenize(batch):
        return tokenizer(batch[metadata.TEXT_COLUMN], padding="max_length", truncation=True,
                         max_length=args.max_seq_length)

    keep = {metadata.LABEL_COLUMN}
    encoded = splits.map(tokenize, batched=True,
                         remove_columns=[c for c in data.column_names if c not in keep])
    return encoded["train"], encoded["test"]


def model_output_dir(args):
    """AIP_MODEL_DIR when the platform sets one (Vertex, and AI Platform with --job-dir), else
    <job-dir>/model; None when neither is set."""
    target = os.environ.get("AIP_MODEL_DIR") or (
        args.job_dir.rstrip("/") + "/model" if args.job_dir else "")
    return local_path(target) if target else None


def save_model(local_dir, args):
    target = model_output_dir(args)
    if target is None:
        print("no --job-dir or AIP_MODEL_DIR: the model stays in %s" % local_dir, flush=True)
        return
    os.makedirs(target, exist_ok=True)
    for name in os.listdir(local_dir):
        source = os.path.join(local_dir, name)
        if os.path.isfile(source):
            shutil.copy2(source, os.path.join(target, name))
    print("model saved to %s" % target, flush=True)
