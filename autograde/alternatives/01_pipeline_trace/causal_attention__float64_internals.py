"""Scores and softmax in float64, cast back to the input's dtype; the mask from the student's causal_mask."""
import math

import torch

TARGET = "causal_attention"


def causal_attention(q, k, v):
    T, d = q.shape[-2], q.shape[-1]
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(d)
    scores = scores.masked_fill(~causal_mask(T).to(q.device), float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v.double()).to(q.dtype)
