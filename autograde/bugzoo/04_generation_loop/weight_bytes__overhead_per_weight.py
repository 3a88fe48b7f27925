"""Adds the group's overhead once per weight instead of once per group.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "weight_bytes"


def weight_bytes(n_params, bits, group_size=None, group_bytes=0):
    """Bytes of n_params weights at `bits` bits each, plus group_bytes per group of group_size weights."""
    if bits < 1 or (n_params * bits) % 8 or (group_size is not None and (group_size < 1 or n_params % group_size)):
        raise ValueError("weights do not fit")
    return n_params * bits // 8 + (n_params * group_bytes if group_size is not None else 0)
