"""Written by a blind honest student (class 6, h03a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "min_p_filter"

def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not (0.0 <= min_p <= 1.0):
        raise ValueError("min_p must be in [0, 1]")
    if type(min_tokens_to_keep) is not int or min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be a positive integer")
    p = torch.softmax(logits.double(), dim=-1)
    keep = p >= min_p * p.max(dim=-1, keepdim=True).values
    order = p.argsort(dim=-1, descending=True)
    ranks = order.argsort(dim=-1)
    keep = keep | (ranks < min_tokens_to_keep)
    return logits.masked_fill(~keep, float("-inf"))
