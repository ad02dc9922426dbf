"""TorchServe handler for a directory that `trainyard-bert train` exports (config.json,
model.safetensors, vocab.txt, labels.json: Hugging Face's BertForSequenceClassification layout),
so bench/serve_vs_torchserve.sh can serve the same model with TorchServe as with
`trainyard-bert serve`. TorchServe has no built-in handler for Hugging Face text classifiers.

Each request's body is one text (TorchServe's /predictions/MODEL takes the raw body); the answer
per request is what `trainyard-bert serve` gives per instance: {"label": NAME, "probabilities":
[p0, p1, ...]}. A batch that TorchServe forms (batchSize, maxBatchDelay) is tokenised together,
padded to its longest text and truncated at max_length tokens, like the native server does.

model-config.yaml's `handler:` section, read here:
  threads     torch's intra-op threads (the native server's --threads)
  max_length  tokens per text incl. [CLS]/[SEP] (the native server's --max-length, default 100)
"""

import json
import os

import torch
from transformers import BertForSequenceClassification, BertTokenizerFast
from ts.torch_handler.base_handler import BaseHandler


class BertTextClassifier(BaseHandler):
    def initialize(self, context):
        settings = (context.model_yaml_config or {}).get("handler", {})
        threads = int(settings.get("threads", 0))
        if threads > 0:
            torch.set_num_threads(threads)
        self.max_length = int(settings.get("max_length", 100))
        model_dir = context.system_properties["model_dir"]
        self.device = torch.device("cpu")
        self.tokenizer = BertTokenizerFast(
            vocab_file=os.path.join(model_dir, "vocab.txt"), do_lower_case=True
        )
        self.model = BertForSequenceClassification.from_pretrained(model_dir)
        self.model.eval()
        # labels.json's id2label names the classes, as in the native server's answers.
        with open(os.path.join(model_dir, "labels.json"), encoding="utf-8") as f:
            id2label = json.load(f)["id2label"]
        self.labels = [id2label[str(i)] for i in range(len(id2label))]
        self.initialized = True

    def preprocess(self, data):
        texts = []
        for request in data:
            body = request.get("data")
            if body is None:
                body = request.get("body")
            if isinstance(body, (bytes, bytearray)):
                body = body.decode("utf-8")
            texts.append(body if isinstance(body, str) else json.dumps(body))
        return self.tokenizer(
            texts,
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )

    def inference(self, data, *args, **kwargs):
        with torch.inference_mode():
            logits = self.model(**data).logits  # (B, C)
            return torch.softmax(logits.float(), dim=-1)

    def postprocess(self, data):
        out = []
        for row in data.tolist():
            best = max(range(len(row)), key=row.__getitem__)
            out.append({"label": self.labels[best], "probabilities": row})
        return out
