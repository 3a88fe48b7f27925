"""Origin: blind author 40 (shown only the student notebooks). Casts bytes_per_value to int, so 4-bit (0.5 bytes) tables cost 0 bytes; exploits '0.5 for 4-bit weights'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "embedding_bytes"

def embedding_bytes(vocab_size: int, d_model: int, bytes_per_value: float) -> float:
    return float(vocab_size * d_model * int(bytes_per_value))
