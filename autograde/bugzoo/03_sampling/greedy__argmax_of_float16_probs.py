"""Red team 15: argmax of the probabilities rounded to float16: logits a few ulps apart tie there, and the
lower id wins ([10, 10.000001, 0] gives 0, not 1).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `greedy__rt15_half_probs.py`."""
import torch

TARGET = "greedy"


def greedy(logits):
    return torch.softmax(logits.float(), -1).half().argmax(-1)
