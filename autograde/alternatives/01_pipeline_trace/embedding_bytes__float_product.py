"""Written by a blind honest student (class 6, h01a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "embedding_bytes"

def embedding_bytes(vocab_size: int, d_model: int, bytes_per_value: float) -> float:
    return float(vocab_size) * float(d_model) * float(bytes_per_value)
