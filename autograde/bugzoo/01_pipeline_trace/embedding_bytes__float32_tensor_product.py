"""Blind 38 (issue 38's blind author, who read only the notebook; caught only after issue 38's cases): Computes the product as a float32 tensor, which is not exact once the count needs more than 24 bits of mantissa (odd sizes); text: "Return the number of **bytes**" (the reference is exact).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `embedding_bytes__blind38_float32_tensor.py`."""
import torch

TARGET = "embedding_bytes"


def embedding_bytes(vocab_size: int, d_model: int, bytes_per_value: float) -> float:
    """Bytes of a (vocab_size, d_model) table at bytes_per_value bytes per value."""
    shape = torch.tensor([vocab_size, d_model], dtype=torch.float32)
    return float(shape.prod() * bytes_per_value)
