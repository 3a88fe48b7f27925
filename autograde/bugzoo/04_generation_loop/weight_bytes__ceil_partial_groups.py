"""Origin: blind author 40 (shown only the student notebooks). Rounds the number of groups up instead of raising for a partial group; exploits 'Raise ValueError when n_params is not a whole number of groups'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "weight_bytes"

import math

def weight_bytes(n_params, bits, group_size=None, group_bytes=0):
    if bits < 1:
        raise ValueError("bits must be >= 1")
    if n_params * bits % 8:
        raise ValueError("n_params * bits is not a whole number of bytes")
    b = n_params * bits // 8
    if group_size is not None:
        if group_size < 1:
            raise ValueError("group_size must be >= 1")
        b += math.ceil(n_params / group_size) * group_bytes
    return b
