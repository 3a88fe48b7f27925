"""The notes' apply_temperature: a one-hot vector in LOGIT space at T = 0, then softmax (gives [0.475, 0.175, ...]).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "probs_at_temperature"


def probs_at_temperature(logits, T):
    if T < 0:
        raise ValueError("temperature must be >= 0")
    if T == 0:
        scaled = torch.nn.functional.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    else:
        scaled = logits / T
    return softmax(scaled)
