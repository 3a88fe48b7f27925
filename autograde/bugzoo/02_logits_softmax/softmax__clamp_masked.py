"""Clamps the probabilities at 1e-30 "to avoid zeros": a masked (-inf) token gets a tiny probability.

From a blind class of honest students (session 8). Runs in the notebook's namespace."""
import torch

TARGET = "softmax"


def softmax(logits):
    e = torch.exp(logits - logits.amax(-1, keepdim=True)).clamp_min(1e-30)
    return e / e.sum(-1, keepdim=True)
