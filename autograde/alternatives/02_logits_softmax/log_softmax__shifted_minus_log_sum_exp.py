"""Written by a blind honest student (class 6, h02a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "log_softmax"

def log_softmax(logits):
    m = logits.amax(-1, keepdim=True)
    shifted = logits - m
    return shifted - shifted.exp().sum(-1, keepdim=True).log()
