"""Origin: blind author 40 (shown only the student notebooks). Multiplies in float32 (numpy): exact for the notes' sizes, but products above 2^24 with odd factors are rounded; exploits 'more vocabularies and widths ... (exact bytes)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "embedding_bytes"

import numpy as np

def embedding_bytes(vocab_size: int, d_model: int, bytes_per_value: float) -> float:
    return float(np.float32(vocab_size) * np.float32(d_model) * np.float32(bytes_per_value))
