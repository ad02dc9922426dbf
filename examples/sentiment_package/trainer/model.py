"""BERT with a sequence classification head: a pretrained checkpoint when one is given, else
BERT-Tiny's shape from a config (no model hub is reachable from the replicas)."""

from transformers import BertConfig, BertForSequenceClassification

from trainer import metadata
from trainer.utils import local_path


def create(num_labels, vocab_size, args):
    labels = dict(id2label=metadata.TARGET_LABELS,
                  label2id={v: k for k, v in metadata.TARGET_LABELS.items()})
    if args.model_dir:
        return BertForSequenceClassification.from_pretrained(
            local_path(args.model_dir), num_labels=num_labels, **labels)
    config = BertConfig(vocab_size=vocab_size, num_labels=num_labels, **metadata.TINY_BERT,
                        **labels)
    return BertForSequenceClassification(config)
