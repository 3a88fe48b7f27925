"""Written by a blind honest student (class 7, h01_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "embedding_bytes"


def embedding_bytes(vocab_size: int, d_model: int, bytes_per_value: float) -> float:
    """Bytes of a (vocab_size, d_model) table at bytes_per_value bytes per value."""
    n_values = vocab_size * d_model
    return float(n_values * bytes_per_value)
