"""Bits instead of nats (log2).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "entropy"


def entropy(probs):
    plogp = torch.where(probs > 0, probs * torch.log2(probs), torch.zeros_like(probs))
    return -plogp.sum(dim=-1)
