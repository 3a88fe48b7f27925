"""Written by a blind honest student (class 6, h04a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "kv_cache_bytes"

def kv_cache_bytes(n_layer, n_head, n_kv_head, head_dim, n_tokens, bytes_per_value, batch_size=1):
    per_token_per_layer = 2 * n_kv_head * head_dim * bytes_per_value
    return per_token_per_layer * n_layer * n_tokens * batch_size
