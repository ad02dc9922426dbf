"""What the experiment is about: the labels, the text column and the model shape used when no
pretrained checkpoint is given."""

TEXT_COLUMN = "text"
LABEL_COLUMN = "label"
TARGET_LABELS = {0: "negative", 1: "positive"}

# BERT-Tiny's shape (2 layers, hidden 128): what a CPU host trains in seconds from a config.
TINY_BERT = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=512, max_position_embeddings=512)
