#!/usr/bin/python3
"""Training-step parity fixture: the first optimizer steps of fine-tuning, computed independently
in float64 (bert_reference.py's forward, autograd, torch.optim.AdamW), for
src/train/train_step_parity_test.cc to compare with trainyard's TrainStep.

Writes
  OUT/model/    config.json (dropout 0, so both sides compute the same function) + model.safetensors
  OUT/expected.safetensors
                input_ids, attention_mask, token_type_ids, labels (int64): the fixed batch
                loss (STEPS,) float64: mean cross-entropy before each step's update
                grad.<step>.<parameter name> float64: the gradient of that step's loss
  OUT/expected.json  {"steps", "learning_rate", "weight_decay", "betas", "eps"}

The optimizer is HF's fine-tuning recipe, as trainyard's AdamW: decoupled weight decay on every
parameter but biases and LayerNorm weights. The word embedding's padding row gets no gradient
(nn.Embedding(padding_idx=pad_token_id)).

Run with Debian's /usr/bin/python3 (python3-torch); exit code 77 when torch is missing.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bert_reference as ref  # noqa: E402  (exits 77 without torch)
import torch  # noqa: E402

STEPS = 3
LEARNING_RATE = 1e-3
WEIGHT_DECAY = 0.01
BETAS = (0.9, 0.999)
EPS = 1e-8


def decays(name):
    return not name.endswith("bias") and "LayerNorm" not in name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    cfg = dict(ref.CONFIG, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    gen = torch.Generator().manual_seed(20261123)
    weights = ref.random_weights(cfg, len(cfg["id2label"]), gen)
    ref.write_dir(os.path.join(args.out, "model"), cfg, weights, "safetensors")
    ids, mask, types = ref.fixed_inputs(cfg, gen)
    labels = torch.randint(0, len(cfg["id2label"]), (ids.shape[0],), generator=gen)

    # The float32 weights the C++ side loads, in float64 from here on.
    params = {name: t.double().clone().requires_grad_(True) for name, t in weights.items()}
    groups = [
        {"params": [p for n, p in params.items() if decays(n)], "weight_decay": WEIGHT_DECAY},
        {"params": [p for n, p in params.items() if not decays(n)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=LEARNING_RATE, betas=BETAS, eps=EPS)
    word = "bert.embeddings.word_embeddings.weight"
    expected = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types, "labels": labels}
    losses = []
    for step in range(STEPS):
        optimizer.zero_grad()
        logits, _ = ref.forward(cfg, params, ids, mask, types)  # (B, C)
        loss = torch.nn.functional.cross_entropy(logits, labels)  # ()
        loss.backward()
        params[word].grad[cfg["pad_token_id"]] = 0.0
        losses.append(loss.item())
        for name, p in params.items():
            expected[f"grad.{step}.{name}"] = p.grad.detach().clone()
        optimizer.step()
    expected["loss"] = torch.tensor(losses, dtype=torch.float64)
    ref.write_safetensors(os.path.join(args.out, "expected.safetensors"), expected)
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump({"steps": STEPS, "learning_rate": LEARNING_RATE, "weight_decay": WEIGHT_DECAY,
                   "betas": list(BETAS), "eps": EPS}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
