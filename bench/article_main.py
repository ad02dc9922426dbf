"""The article's main.py (seed 000), as written, with Hugging Face transformers: a Dataset whose
__getitem__ tokenizes one text with BertTokenizer.encode_plus (pad_to_max_length, max_length
100), a DataLoader (shuffle), BertModel + Dropout(0.1) + Linear(hidden, 3) on pooler_output,
torch.optim.Adam, CrossEntropyLoss; train, validate each epoch, test at the end.

What differs from the article, and only this: the checkpoint and vocab come from --bert-dir
(the article's 'models/bert_uncased_L-2_H-128_A-2'); the head's in_features is the checkpoint's
hidden size (the article hard-codes 128, BERT-Tiny's); --seed seeds torch (the article does not
seed); --max-length (default the article's 100); the CSV column names are flags (the article's
bodyText/Target are the defaults, as trainyard-bert make-splits writes them); the end prints one
JSON line with the accuracies and times instead of saving the model.

On transformers 5 (the `current` venv set: today's transformers and PyPI's torch) the smallest
port the API forces, and only it: `encode_plus` is gone, so the tokenizer is called directly,
and `pad_to_max_length=True` (gone too) becomes `padding="max_length"` with `truncation=True`,
which 4.x applied by itself when max_length was given (it warned "Truncation was not explicitly
activated"). The JSON line's "transformers" field says which ran.

Run with the anchors venv (transformers 4.40.1, the article's pin, over Debian's python3-torch):
  TRAINYARD_VENV_SET=anchors scripts/venv-python.sh bench/article_main.py --bert-dir DIR \\
      --training-file train.csv --validation-file val.csv --testing-file test.csv
"""
import json
import logging
import time

import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
import article_args
import transformers
from transformers import BertModel, BertTokenizer

STARTED = time.time()
logging.basicConfig(format="%(asctime)s [%(levelname)s]: %(message)s", level=logging.INFO)
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class BertDataset(Dataset):
    def __init__(self, df, tokenizer, text_column, label_column, max_length=100):
        super().__init__()
        self.df = df
        self.tokenizer = tokenizer
        self.text = df[text_column]
        self.target = df[label_column]
        self.max_length = max_length

    def __len__(self):
        return len(self.df)

    def __getitem__(self, idx):
        X = self.text.values[idx]
        y = self.target.values[idx]
        if hasattr(self.tokenizer, "encode_plus"):
            inputs = self.tokenizer.encode_plus(
                X,
                pad_to_max_length=True,
                add_special_tokens=True,
                return_attention_mask=True,
                max_length=self.max_length,
            )
        else:  # transformers 5: the port (module docstring)
            inputs = self.tokenizer(
                X,
                padding="max_length",
                truncation=True,
                add_special_tokens=True,
                return_attention_mask=True,
                max_length=self.max_length,
            )
        x = {
            "ids": torch.tensor(inputs["input_ids"], dtype=torch.long).to(DEVICE),
            "mask": torch.tensor(inputs["attention_mask"], dtype=torch.long).to(DEVICE),
            "token_type_ids": torch.tensor(inputs["token_type_ids"], dtype=torch.long).to(DEVICE),
        }
        return x, torch.tensor(y, dtype=torch.long).to(DEVICE)


class SentimentBERT(nn.Module):
    def __init__(self, bert_model):
        super().__init__()
        self.bert_module = bert_model
        self.dropout = nn.Dropout(0.1)
        self.final = nn.Linear(in_features=bert_model.config.hidden_size, out_features=3,
                               bias=True)

    def forward(self, inputs):
        x = self.bert_module(inputs["ids"], inputs["mask"], inputs["token_type_ids"])
        return self.final(self.dropout(x["pooler_output"]))


def train(epoch, model, dataloader, loss_fn, optimizer):
    model.train()
    total_acc, total_count, samples = 0, 0, 0
    start = time.time()
    for idx, (inputs, label) in enumerate(dataloader):
        optimizer.zero_grad()
        predicted = model(inputs)
        loss = loss_fn(predicted, label)
        loss.backward()
        optimizer.step()
        total_acc += (predicted.argmax(1) == label).sum().item()
        total_count += label.size(0)
        samples += label.size(0)
        if idx % 50 == 0:
            print("Epoch {:3d} | {:5d}/{:5d} batches | accuracy {:8.3f} | loss {:8.3f}".format(
                epoch, idx, len(dataloader), total_acc / total_count, loss.item()), flush=True)
            total_acc, total_count = 0, 0
    return samples, time.time() - start


def evaluate(model, dataloader):
    model.eval()
    total_acc, total_count = 0, 0
    with torch.no_grad():
        for inputs, label in dataloader:
            total_acc += (model(inputs).argmax(1) == label).sum().item()
            total_count += label.size(0)
    return total_acc / total_count


def main():
    p = article_args.parser(max_length=100)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    tokenizer = BertTokenizer.from_pretrained(args.bert_dir)
    bert = BertModel.from_pretrained(args.bert_dir)
    columns = (tokenizer, args.text_column, args.label_column, args.max_length)
    train_loader = DataLoader(BertDataset(pd.read_csv(args.training_file), *columns),
                              batch_size=args.batch_size, shuffle=True)
    eval_loader = DataLoader(BertDataset(pd.read_csv(args.validation_file), *columns),
                             batch_size=args.batch_size)
    test_loader = DataLoader(BertDataset(pd.read_csv(args.testing_file), *columns),
                             batch_size=args.batch_size)
    classifier = SentimentBERT(bert).to(DEVICE)
    optimizer = torch.optim.Adam([q for q in classifier.parameters() if q.requires_grad],
                                 args.learning_rate)
    loss_fn = nn.CrossEntropyLoss()
    samples, loop_seconds, epoch_seconds = 0, 0.0, 0.0
    for epoch in range(1, args.epochs + 1):
        started = time.time()
        n, seconds = train(epoch, classifier, train_loader, loss_fn, optimizer)
        samples, loop_seconds = samples + n, loop_seconds + seconds
        print("End of epoch %d - valid accuracy %.4f" % (epoch, evaluate(classifier, eval_loader)),
              flush=True)
        epoch_seconds += time.time() - started
    test = evaluate(classifier, test_loader)
    print(json.dumps({"pipeline": "article-main-transformers", "seed": args.seed,
                      "test_accuracy": test, "train_samples_per_second": samples / loop_seconds,
                      "end_to_end_seconds": time.time() - STARTED, "epoch_seconds": epoch_seconds,
                      "torch": torch.__version__, "transformers": transformers.__version__,
                      "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
