"""Counts the table twice (embedding + LM head) although asked for one table.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "embedding_bytes"


def embedding_bytes(vocab_size, d_model, bytes_per_value):
    return 2 * vocab_size * d_model * bytes_per_value
