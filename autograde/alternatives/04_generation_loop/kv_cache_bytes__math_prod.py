"""Written by a blind honest student (class 6, h04b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "kv_cache_bytes"

def kv_cache_bytes(n_layer, n_head, n_kv_head, head_dim, n_tokens, bytes_per_value, batch_size=1):
    return math.prod([2, n_layer, n_kv_head, head_dim, n_tokens, bytes_per_value, batch_size])
