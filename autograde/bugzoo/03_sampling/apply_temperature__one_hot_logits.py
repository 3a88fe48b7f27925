"""The notes' T = 0: a one-hot vector in logit space (softmax of it is not greedy).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "apply_temperature"


def apply_temperature(logits, T):
    if T < 0:
        raise ValueError("T must be >= 0")
    if T == 0:
        return torch.nn.functional.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    return logits / T
