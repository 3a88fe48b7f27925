"""Averages p log p over the vocabulary instead of summing.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "entropy"


def entropy(probs):
    plogp = torch.where(probs > 0, probs * torch.log(probs), torch.zeros_like(probs))
    return -plogp.mean(dim=-1)
