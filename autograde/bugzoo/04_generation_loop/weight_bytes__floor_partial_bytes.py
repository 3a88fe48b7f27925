"""Origin: blind author 40 (shown only the student notebooks). Floors n_params * bits / 8 instead of raising when it is not a whole number of bytes; exploits 'Raise ValueError ... when n_params x bits is not a whole number of bytes'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "weight_bytes"

def weight_bytes(n_params, bits, group_size=None, group_bytes=0):
    if bits < 1:
        raise ValueError("bits must be >= 1")
    b = n_params * bits // 8
    if group_size is not None:
        if group_size < 1 or n_params % group_size:
            raise ValueError("n_params must be a whole number of groups")
        b += n_params // group_size * group_bytes
    return b
