"""Red team 14: argmax over the first 8192 ids only (every hidden row had at most ~4096 tokens).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `greedy__rt14_first_8192_ids.py`."""
import torch

TARGET = "greedy"


def greedy(logits):
    return logits[..., :8192].argmax(dim=-1)
