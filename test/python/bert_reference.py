#!/usr/bin/python3
"""Independent reference for trainyard's BERT classifier (forward parity fixture).

Implements HF BertForSequenceClassification's forward from the math (not from transformers:
embeddings sum + LayerNorm, post-LN self-attention with the additive finfo.min padding mask, erf
GELU feed-forward, tanh pooler over [CLS], linear head) in float64, random-initialises a small
config, and writes checkpoint directories the C++ loader must read:

  OUT/safetensors/  config.json + model.safetensors   (HF names, written with struct/json here)
  OUT/bin/          config.json + pytorch_model.bin   (torch.save of an OrderedDict state_dict
                    with _metadata, a position_ids buffer, a cls.* pre-training head tied to the
                    word embeddings: what HF checkpoints contain)
  OUT/legacy/       the same in the legacy (PyTorch < 1.6) torch.save format
  OUT/bare/         config.json + pytorch_model.bin   (BertModel-style names without "bert.",
                    legacy LayerNorm.gamma/.beta)
  OUT/expected.safetensors  input_ids, attention_mask, token_type_ids (int64),
                    logits, pooled (float64): the reference outputs

With --check DIR it instead reads DIR/config.json + DIR/model.safetensors (e.g. written by
trainyard's SaveModelFiles) and OUT/expected.safetensors's inputs, and prints the max abs
difference between its logits and OUT/expected.safetensors's "logits" as JSON.

Run with Debian's /usr/bin/python3 (python3-torch).
"""
import argparse
import collections
import json
import math
import os
import struct
import sys

try:
    import torch
except ImportError:  # the C++ test skips on this exit code
    print("bert_reference.py: python3-torch is not installed", file=sys.stderr)
    sys.exit(77)

CONFIG = {
    "vocab_size": 97,
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "max_position_embeddings": 40,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "initializer_range": 0.02,
    "pad_token_id": 0,
    "model_type": "bert",
    "architectures": ["BertForSequenceClassification"],
    "id2label": {"0": "negative", "1": "neutral", "2": "positive"},
    "label2id": {"negative": 0, "neutral": 1, "positive": 2},
}

DTYPES = {torch.float32: ("F32", 4), torch.float64: ("F64", 8), torch.int64: ("I64", 8)}
DTYPE_BY_NAME = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64}


def write_safetensors(path, tensors, metadata=None):
    """The safetensors format by hand: u64 LE header length, JSON header, raw LE data."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        code, size = DTYPES[t.dtype]
        data = t.numpy().tobytes()
        assert len(data) == t.numel() * size
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        buf = bytearray(data[8 + n + begin : 8 + n + end])
        t = torch.frombuffer(buf, dtype=DTYPE_BY_NAME[info["dtype"]]) if buf else torch.zeros(0, dtype=DTYPE_BY_NAME[info["dtype"]])
        out[name] = t.reshape(info["shape"]).clone()
    return out


def random_weights(cfg, num_labels, gen):
    """HF parameter names and shapes; weights larger than HF's init so every path matters."""
    H, I, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]

    def normal(*shape, std=0.3):
        return (torch.randn(*shape, generator=gen) * std).float()

    w = collections.OrderedDict()
    w["bert.embeddings.word_embeddings.weight"] = normal(cfg["vocab_size"], H)
    w["bert.embeddings.position_embeddings.weight"] = normal(cfg["max_position_embeddings"], H)
    w["bert.embeddings.token_type_embeddings.weight"] = normal(cfg["type_vocab_size"], H)
    w["bert.embeddings.LayerNorm.weight"] = 1 + normal(H, std=0.1)
    w["bert.embeddings.LayerNorm.bias"] = normal(H, std=0.1)
    for i in range(L):
        p = f"bert.encoder.layer.{i}."
        for proj in ("query", "key", "value"):
            w[p + f"attention.self.{proj}.weight"] = normal(H, H, std=1 / math.sqrt(H))
            w[p + f"attention.self.{proj}.bias"] = normal(H, std=0.1)
        w[p + "attention.output.dense.weight"] = normal(H, H, std=1 / math.sqrt(H))
        w[p + "attention.output.dense.bias"] = normal(H, std=0.1)
        w[p + "attention.output.LayerNorm.weight"] = 1 + normal(H, std=0.1)
        w[p + "attention.output.LayerNorm.bias"] = normal(H, std=0.1)
        w[p + "intermediate.dense.weight"] = normal(I, H, std=1 / math.sqrt(H))
        w[p + "intermediate.dense.bias"] = normal(I, std=0.1)
        w[p + "output.dense.weight"] = normal(H, I, std=1 / math.sqrt(I))
        w[p + "output.dense.bias"] = normal(H, std=0.1)
        w[p + "output.LayerNorm.weight"] = 1 + normal(H, std=0.1)
        w[p + "output.LayerNorm.bias"] = normal(H, std=0.1)
    w["bert.pooler.dense.weight"] = normal(H, H, std=1 / math.sqrt(H))
    w["bert.pooler.dense.bias"] = normal(H, std=0.1)
    w["classifier.weight"] = normal(num_labels, H, std=1.0)
    w["classifier.bias"] = normal(num_labels, std=0.1)
    return w


def layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)  # biased variance, as nn.LayerNorm
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def linear(x, w, prefix):
    return x @ w[prefix + ".weight"].T + w[prefix + ".bias"]


def forward(cfg, weights, input_ids, attention_mask, token_type_ids):
    """float64 forward in eval mode (no dropout). Returns (logits (B, C), pooled (B, H))."""
    w = {k: v.double() for k, v in weights.items()}
    eps = cfg["layer_norm_eps"]
    B, T = input_ids.shape
    NH = cfg["num_attention_heads"]
    HS = cfg["hidden_size"] // NH
    pos = torch.arange(T)
    x = (w["bert.embeddings.word_embeddings.weight"][input_ids]
         + w["bert.embeddings.token_type_embeddings.weight"][token_type_ids]
         + w["bert.embeddings.position_embeddings.weight"][pos])
    x = layer_norm(x, w["bert.embeddings.LayerNorm.weight"], w["bert.embeddings.LayerNorm.bias"], eps)
    # Additive mask as current HF builds it for float32 models: (1 - mask) * finfo(float32).min.
    additive = (1.0 - attention_mask.double())[:, None, None, :] * torch.finfo(torch.float32).min
    for i in range(cfg["num_hidden_layers"]):
        p = f"bert.encoder.layer.{i}."

        def heads(t):
            return t.view(B, T, NH, HS).permute(0, 2, 1, 3)

        q = heads(linear(x, w, p + "attention.self.query"))
        k = heads(linear(x, w, p + "attention.self.key"))
        v = heads(linear(x, w, p + "attention.self.value"))
        scores = q @ k.transpose(-1, -2) / math.sqrt(HS) + additive
        probs = torch.softmax(scores, dim=-1)
        ctx = (probs @ v).permute(0, 2, 1, 3).reshape(B, T, NH * HS)
        a = layer_norm(linear(ctx, w, p + "attention.output.dense") + x,
                       w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
        h = gelu(linear(a, w, p + "intermediate.dense"))
        x = layer_norm(linear(h, w, p + "output.dense") + a,
                       w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    pooled = torch.tanh(linear(x[:, 0], w, "bert.pooler.dense"))
    logits = linear(pooled, w, "classifier")
    return logits, pooled


def fixed_inputs(cfg, gen):
    lengths = [12, 7, 3, 12, 1, 9]
    T = max(lengths)
    ids = torch.randint(1, cfg["vocab_size"], (len(lengths), T), generator=gen)
    mask = torch.zeros(len(lengths), T, dtype=torch.int64)
    types = torch.zeros(len(lengths), T, dtype=torch.int64)
    for b, n in enumerate(lengths):
        mask[b, :n] = 1
        ids[b, n:] = cfg["pad_token_id"]
        types[b, n // 2 : n] = 1  # a sentence pair: second half is segment B
    return ids, mask, types


def save_state_dict_bin(path, tensors, legacy=False):
    """torch.save of what nn.Module.state_dict() returns: an OrderedDict carrying _metadata."""
    sd = collections.OrderedDict(tensors)
    sd._metadata = collections.OrderedDict([("", {"version": 1})])
    torch.save(sd, path, _use_new_zipfile_serialization=not legacy)


def write_dir(path, cfg, tensors, fmt):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    if fmt == "safetensors":
        write_safetensors(os.path.join(path, "model.safetensors"), tensors, {"format": "pt"})
    else:
        save_state_dict_bin(os.path.join(path, "pytorch_model.bin"), tensors, legacy=fmt == "legacy")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--check", help="model dir to evaluate against OUT/expected.safetensors")
    args = ap.parse_args()

    if args.check:
        with open(os.path.join(args.check, "config.json")) as f:
            cfg = json.load(f)
        weights = read_safetensors(os.path.join(args.check, "model.safetensors"))
        expected = read_safetensors(os.path.join(args.out, "expected.safetensors"))
        logits, _ = forward(cfg, weights, expected["input_ids"], expected["attention_mask"], expected["token_type_ids"])
        print(json.dumps({"max_abs_diff": (logits - expected["logits"]).abs().max().item(),
                          "labels": [cfg["id2label"][str(i)] for i in range(len(cfg["id2label"]))]}))
        return 0

    gen = torch.Generator().manual_seed(20261122)
    cfg = dict(CONFIG)
    weights = random_weights(cfg, len(cfg["id2label"]), gen)
    ids, mask, types = fixed_inputs(cfg, gen)
    logits, pooled = forward(cfg, weights, ids, mask, types)

    write_dir(os.path.join(args.out, "safetensors"), cfg, weights, "safetensors")

    # HF-style pickle: plus a position_ids buffer and an MLM head whose decoder weight shares the
    # word embeddings' storage (tied weights), both of which the loader must ignore.
    full = collections.OrderedDict(weights)
    full["bert.embeddings.position_ids"] = torch.arange(cfg["max_position_embeddings"]).unsqueeze(0)
    full["cls.predictions.bias"] = torch.zeros(cfg["vocab_size"])
    full["cls.predictions.decoder.weight"] = weights["bert.embeddings.word_embeddings.weight"]
    write_dir(os.path.join(args.out, "bin"), cfg, full, "bin")
    # The pre-1.6 format that 2020-era HF checkpoints (the BERT miniatures) were saved in.
    write_dir(os.path.join(args.out, "legacy"), cfg, full, "legacy")

    # A bare BertModel's names (no "bert." prefix) with TF-era LayerNorm.gamma/beta.
    bare = collections.OrderedDict()
    for name, t in weights.items():
        if name.startswith("bert."):
            name = name[len("bert."):]
        name = name.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        bare[name] = t
    write_dir(os.path.join(args.out, "bare"), cfg, bare, "bin")

    write_safetensors(os.path.join(args.out, "expected.safetensors"),
                      {"input_ids": ids, "attention_mask": mask, "token_type_ids": types,
                       "logits": logits, "pooled": pooled})
    return 0


if __name__ == "__main__":
    sys.exit(main())
