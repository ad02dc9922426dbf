"""Train and evaluate with Hugging Face's Trainer; the accuracy goes to the log and, where
cloudml-hypertune is installed (Vertex's prebuilt images have it), to hyperparameter tuning."""

import os
import tempfile

import numpy as np

# Nothing is fetched at run time: the data and model are local or in a bucket.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
# The replica's user may have no writable HOME for datasets' cache.
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="hf-"))

from transformers import EvalPrediction, Trainer, TrainingArguments, default_data_collator, set_seed  # noqa: E402

from trainer import model, utils  # noqa: E402


def compute_metrics(p: EvalPrediction):
    logits = p.predictions[0] if isinstance(p.predictions, tuple) else p.predictions
    return {"accuracy": float((np.argmax(logits, axis=1) == p.label_ids).mean())}


def report(metrics, step):
    try:
        import hypertune
    except ImportError:
        return
    hypertune.HyperTune().report_hyperparameter_tuning_metric(
        hyperparameter_metric_tag="accuracy", metric_value=metrics["eval_accuracy"],
        global_step=step)


def run(args):
    set_seed(args.seed)
    tokenizer = utils.load_tokenizer(args)
    train_dataset, test_dataset = utils.load_data(args, tokenizer)
    print("train rows %d, test rows %d" % (len(train_dataset), len(test_dataset)), flush=True)
    classifier = model.create(len(train_dataset.unique("label")), tokenizer.vocab_size, args)
    local_dir = os.path.join(tempfile.mkdtemp(prefix="trainer-"), args.model_name)
    training_args = TrainingArguments(
        output_dir=local_dir,
        evaluation_strategy="epoch",
        save_strategy="no",
        learning_rate=args.learning_rate,
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        num_train_epochs=args.num_epochs,
        weight_decay=args.weight_decay,
        seed=args.seed,
        disable_tqdm=True,  # one log line per report, not progress bars
        logging_steps=50,
        report_to=[],
    )
    trainer = Trainer(classifier, training_args, train_dataset=train_dataset,
                      eval_dataset=test_dataset, data_collator=default_data_collator,
                      tokenizer=tokenizer, compute_metrics=compute_metrics)
    trainer.train()
    metrics = trainer.evaluate()
    print("test metrics: %s" % {k: round(v, 4) for k, v in metrics.items()}, flush=True)
    report(metrics, trainer.state.global_step)
    trainer.save_model(local_dir)
    utils.save_model(local_dir, args)
