#!/usr/bin/python3
"""The article's PyTorch main.py training pipeline, re-implemented for the trainer benchmark.

Same structure as the article: a Dataset whose __getitem__ tokenizes one text with the (slow,
pure-Python) BertTokenizer, pads it to max_length=100 and moves it to the device; a DataLoader
with batch_size and shuffle=True; BertModel (HF architecture, written out in torch.nn because
`transformers` is not installable here) + dropout + Linear head; torch.optim.Adam; CrossEntropyLoss.
Prints one JSON line: {"pipeline": "python-article", "samples_per_second": ..., ...}.

--model-size base swaps BERT-Tiny (2 layers, hidden 128, 2 heads) for the BERT-Base shape (12
layers, hidden 768, 12 heads), random weights. --pretokenized times the training loop alone: the
batches it will train on are tokenized (per sample, as __getitem__ does) and moved to the device
before the clock starts, and the tokenization rate is reported apart (tokenize_seconds_per_sample).
Runs on CUDA when torch sees a GPU.

Run with Debian's python3-torch: /usr/bin/python3 bench/train_article_pipeline.py --csv F --vocab V
"""
import argparse
import csv
import json
import math
import time
import unicodedata

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


# --- HF's slow BertTokenizer (tokenization_bert.py), uncased -----------------------------------
def _is_whitespace(ch):
    return ch in (" ", "\t", "\n", "\r") or unicodedata.category(ch) == "Zs"


def _is_control(ch):
    if ch in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(ch).startswith("C")


def _is_punctuation(ch):
    cp = ord(ch)
    if (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126):
        return True
    return unicodedata.category(ch).startswith("P")


def _is_chinese_char(cp):
    return ((0x4E00 <= cp <= 0x9FFF) or (0x3400 <= cp <= 0x4DBF) or (0x20000 <= cp <= 0x2A6DF)
            or (0x2A700 <= cp <= 0x2B73F) or (0x2B740 <= cp <= 0x2B81F)
            or (0x2B820 <= cp <= 0x2CEAF) or (0xF900 <= cp <= 0xFAFF)
            or (0x2F800 <= cp <= 0x2FA1F))


class BertTokenizer:
    def __init__(self, vocab_file):
        with open(vocab_file, encoding="utf-8") as f:
            self.vocab = {line.rstrip("\n"): i for i, line in enumerate(f)}
        self.specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        self.unk = self.vocab["[UNK]"]

    def _clean(self, text):
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or _is_control(ch):
                continue
            out.append(" " if _is_whitespace(ch) else ch)
        return "".join(out)

    def _chinese(self, text):
        out = []
        for ch in text:
            if _is_chinese_char(ord(ch)):
                out.extend([" ", ch, " "])
            else:
                out.append(ch)
        return "".join(out)

    def _strip_accents(self, text):
        return "".join(c for c in unicodedata.normalize("NFD", text)
                       if unicodedata.category(c) != "Mn")

    def _split_punc(self, text):
        out, start_new = [], True
        for ch in text:
            if _is_punctuation(ch):
                out.append([ch])
                start_new = True
            else:
                if start_new:
                    out.append([])
                start_new = False
                out[-1].append(ch)
        return ["".join(x) for x in out]

    def _wordpiece(self, token):
        if len(token) > 100:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(token):
            end, cur = len(token), None
            while start < end:
                sub = token[start:end]
                if start > 0:
                    sub = "##" + sub
                if sub in self.vocab:
                    cur = sub
                    break
                end -= 1
            if cur is None:
                return ["[UNK]"]
            pieces.append(cur)
            start = end
        return pieces

    def tokenize(self, text):
        text = self._chinese(self._clean(text))
        tokens = []
        for tok in text.strip().split():
            if tok in self.specials:
                tokens.append(tok)
                continue
            tok = self._strip_accents(tok.lower())
            for sub in self._split_punc(tok):
                for word in sub.strip().split():
                    tokens.extend(self._wordpiece(word))
        return tokens

    def encode_plus(self, text, max_length=100, pad_to_max_length=True, **_):
        ids = [self.vocab.get(t, self.unk) for t in self.tokenize(text)][: max_length - 2]
        ids = [self.vocab["[CLS]"]] + ids + [self.vocab["[SEP]"]]
        mask = [1] * len(ids)
        if pad_to_max_length:
            pad = max_length - len(ids)
            ids, mask = ids + [self.vocab["[PAD]"]] * pad, mask + [0] * pad
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": [0] * len(ids)}


# --- The article's Dataset ------------------------------------------------------------------
class BertDataset(Dataset):
    def __init__(self, rows, tokenizer, max_length=100):
        self.rows, self.tokenizer, self.max_length = rows, tokenizer, max_length

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        text, target = self.rows[idx]
        inputs = self.tokenizer.encode_plus(text, pad_to_max_length=True, add_special_tokens=True,
                                            return_attention_mask=True, max_length=self.max_length)
        x = {"ids": torch.tensor(inputs["input_ids"], dtype=torch.long).to(DEVICE),
             "mask": torch.tensor(inputs["attention_mask"], dtype=torch.long).to(DEVICE),
             "token_type_ids": torch.tensor(inputs["token_type_ids"], dtype=torch.long).to(DEVICE)}
        return x, torch.tensor(target, dtype=torch.long).to(DEVICE)


# --- HF BertModel (modeling_bert.py), BERT-Tiny sizes ---------------------------------------
MODEL_SIZES = {  # hidden, layers, heads, intermediate
    "tiny": (128, 2, 2, 512),
    "base": (768, 12, 12, 3072),
}


class BertLayer(nn.Module):
    def __init__(self, h=128, heads=2, inter=512, p=0.1):
        super().__init__()
        self.heads, self.hd = heads, h // heads
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.attn_drop = nn.Dropout(p)
        self.attn_out, self.attn_drop2, self.attn_ln = nn.Linear(h, h), nn.Dropout(p), nn.LayerNorm(h, eps=1e-12)
        self.inter, self.out = nn.Linear(h, inter), nn.Linear(inter, h)
        self.out_drop, self.out_ln = nn.Dropout(p), nn.LayerNorm(h, eps=1e-12)

    def split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.hd).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd) + ext_mask
        probs = self.attn_drop(nn.functional.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous().view(x.shape)
        x = self.attn_ln(self.attn_drop2(self.attn_out(ctx)) + x)
        return self.out_ln(self.out_drop(self.out(nn.functional.gelu(self.inter(x)))) + x)


class BertModel(nn.Module):
    def __init__(self, vocab=30522, h=128, layers=2, p=0.1, heads=2, inter=512):
        super().__init__()
        self.hidden_size = h
        self.word = nn.Embedding(vocab, h, padding_idx=0)
        self.pos, self.token_type = nn.Embedding(512, h), nn.Embedding(2, h)
        self.ln, self.drop = nn.LayerNorm(h, eps=1e-12), nn.Dropout(p)
        self.layers = nn.ModuleList([BertLayer(h, heads, inter, p) for _ in range(layers)])
        self.pooler = nn.Linear(h, h)

    def forward(self, ids, mask, token_type_ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.drop(self.ln(self.word(ids) + self.token_type(token_type_ids) + self.pos(pos)))
        ext = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, ext)
        return {"pooler_output": torch.tanh(self.pooler(x[:, 0]))}


class SentimentBERT(nn.Module):
    def __init__(self, bert_model, num_labels):
        super().__init__()
        self.bert_module = bert_model
        self.dropout = nn.Dropout(0.1)
        self.final = nn.Linear(in_features=bert_model.hidden_size, out_features=num_labels,
                               bias=True)

    def forward(self, inputs):
        x = self.bert_module(inputs["ids"], inputs["mask"], inputs["token_type_ids"])
        return self.final(self.dropout(x["pooler_output"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--text-column", default="bodyText")
    ap.add_argument("--label-column", default="Target")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--learning-rate", type=float, default=1e-4)
    ap.add_argument("--steps", type=int, default=12, help="timed steps after 2 warm-up steps")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--model-size", choices=sorted(MODEL_SIZES), default="tiny")
    ap.add_argument("--pretokenized", action="store_true",
                    help="tokenize the timed batches before the clock starts")
    args = ap.parse_args()
    started = time.perf_counter()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    with open(args.csv, newline="", encoding="utf-8") as f:
        rows = [(r[args.text_column], int(r[args.label_column])) for r in csv.DictReader(f)]
    num_labels = max(t for _, t in rows) + 1
    tokenizer = BertTokenizer(args.vocab)
    dataset = BertDataset(rows, tokenizer, max_length=100)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    tokenize_seconds_per_sample = 0.0
    if args.pretokenized:
        # The batches the loop will take, tokenized and on the device before it starts.
        needed = (2 + args.steps) * args.batch_size
        order = torch.randperm(len(rows))[:needed].tolist()
        t0 = time.perf_counter()
        items = [dataset[i] for i in order]
        if DEVICE.type == "cuda":
            torch.cuda.synchronize()
        tokenize_seconds_per_sample = (time.perf_counter() - t0) / max(1, len(items))
        loader = []
        for b in range(0, len(items), args.batch_size):
            chunk = items[b:b + args.batch_size]
            loader.append(({k: torch.stack([x[k] for x, _ in chunk]) for k in chunk[0][0]},
                           torch.stack([y for _, y in chunk])))
    hidden, layers, heads, inter = MODEL_SIZES[args.model_size]
    bert = BertModel(vocab=len(tokenizer.vocab), h=hidden, layers=layers, heads=heads, inter=inter)
    model = SentimentBERT(bert, num_labels).to(DEVICE)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], args.learning_rate)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    warmup, timed, samples, start, cpu, proc_start = 2, 0, 0, None, 0.0, None
    setup_seconds = None
    while timed < args.steps:
        step_cpu = time.thread_time()
        for inputs, label in loader:
            if setup_seconds is None:
                setup_seconds = time.perf_counter() - started
            if warmup == 0 and start is None:
                start = time.perf_counter()
                proc_start = time.process_time()
            optimizer.zero_grad()
            loss = loss_fn(model(inputs), label)
            loss.backward()
            optimizer.step()
            loss.item()
            if warmup > 0:
                warmup -= 1
                step_cpu = time.thread_time()
                continue
            timed += 1
            samples += label.shape[0]
            # Thread CPU time of this step including its DataLoader work (num_workers=0 loads in
            # this thread, as in the article): robust to other load on a shared machine.
            cpu += time.thread_time() - step_cpu
            step_cpu = time.thread_time()
            if timed >= args.steps:
                break
        if args.pretokenized and timed < args.steps:
            raise SystemExit("train_article_pipeline: --pretokenized ran out of batches "
                             "(the CSV has fewer than (2 + --steps) x --batch-size rows)")
    # The data loading (per-sample tokenization) is inside the timed loop, as in the article.
    seconds = time.perf_counter() - start
    # CPU time of every thread of the process (OpenBLAS runs GEMMs on its own worker threads,
    # which thread_time does not see).
    process_cpu = time.process_time() - proc_start
    print(json.dumps({"pipeline": "python-article", "samples_per_second": samples / seconds,
                      "steps": timed, "samples": samples, "seconds": seconds,
                      "cpu_samples_per_second": samples / cpu, "thread_cpu_seconds": cpu,
                      "process_cpu_samples_per_second": samples / process_cpu,
                      "process_cpu_seconds": process_cpu,
                      "threads": torch.get_num_threads(), "torch": torch.__version__,
                      "device": str(DEVICE), "model_size": args.model_size,
                      "pretokenized": args.pretokenized, "setup_seconds": setup_seconds,
                      "tokenize_seconds_per_sample": tokenize_seconds_per_sample}))


if __name__ == "__main__":
    main()
