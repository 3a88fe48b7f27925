"""Origin: blind class 6 (eb_int).

truncates to int (loses .5 byte for odd counts at 0.5 B/value) (the text: Return the number of bytes ... 0.5 for 4-bit weights (type float)).

From a blind class (class 6); it kept its points until the hidden case named after it. Runs in the notebook's namespace.

Formerly `embedding_bytes__class6_eb_int.py`."""
import math
import torch

TARGET = "embedding_bytes"

def embedding_bytes(vocab_size: int, d_model: int, bytes_per_value: float) -> float:
    return int(vocab_size * d_model * bytes_per_value)
