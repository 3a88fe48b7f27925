"""Written by a blind honest student (class 7, h04_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "weight_bytes"


def weight_bytes(n_params: int, bits: int, group_size: int | None = None, group_bytes: int = 0) -> int:
    """Bytes of n_params weights at `bits` bits each, plus group_bytes per group of group_size weights."""
    if bits < 1:
        raise ValueError("bits must be at least 1")
    if group_size is not None and group_size < 1:
        raise ValueError("group_size must be at least 1")
    if group_size is not None and n_params % group_size != 0:
        raise ValueError("n_params must be a whole number of groups")
    n_bits = n_params * bits
    if n_bits % 8 != 0:
        raise ValueError("the weights do not fill whole bytes")
    n_groups = n_params // group_size if group_size is not None else 0
    return n_bits // 8 + n_groups * group_bytes
