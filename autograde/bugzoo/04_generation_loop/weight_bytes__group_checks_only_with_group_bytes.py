"""Red team 15: the group-size checks run only when group_bytes is non-zero, so groups of 0, negative groups and
sizes that are not whole groups raise nothing with group_bytes=0.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `weight_bytes__rt15_group_checks_need_bytes.py`."""

TARGET = "weight_bytes"


def weight_bytes(n_params, bits, group_size=None, group_bytes=0):
    if bits < 1:
        raise ValueError(f"bits must be >= 1, got {bits}")
    if (n_params * bits) % 8:
        raise ValueError(f"{n_params} weights x {bits} bits is not a whole number of bytes")
    groups = 0
    if group_size is not None and group_bytes:
        if group_size < 1 or n_params % group_size:
            raise ValueError(f"{n_params} weights are not a whole number of groups of {group_size}")
        groups = n_params // group_size
    return n_params * bits // 8 + groups * group_bytes
