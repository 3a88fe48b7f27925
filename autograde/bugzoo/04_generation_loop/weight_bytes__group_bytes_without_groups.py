"""Origin: blind author 40 (shown only the student notebooks). Adds group_bytes per weight-group even when group_size is None (treats None as one group); exploits 'without group_size there are no groups, and group_bytes adds nothing'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "weight_bytes"

def weight_bytes(n_params, bits, group_size=None, group_bytes=0):
    if bits < 1:
        raise ValueError("bits must be >= 1")
    if n_params * bits % 8:
        raise ValueError("n_params * bits is not a whole number of bytes")
    if group_size is None:
        return n_params * bits // 8 + group_bytes
    if group_size < 1 or n_params % group_size:
        raise ValueError("n_params must be a whole number of groups")
    return n_params * bits // 8 + n_params // group_size * group_bytes
