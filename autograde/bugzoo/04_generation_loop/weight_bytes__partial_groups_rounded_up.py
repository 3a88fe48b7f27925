"""Accepts a partial last group (rounds the group count up) instead of raising ValueError.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

TARGET = "weight_bytes"


def weight_bytes(n_params, bits, group_size=None, group_bytes=0):
    """Bytes of n_params weights at `bits` bits each, plus group_bytes per group of group_size weights."""
    if bits < 1 or (n_params * bits) % 8:
        raise ValueError("weights do not fit")
    groups = math.ceil(n_params / group_size) if group_size else 0
    return n_params * bits // 8 + groups * group_bytes
