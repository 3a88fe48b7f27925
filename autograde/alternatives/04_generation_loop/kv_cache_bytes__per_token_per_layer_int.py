"""Written by a blind honest student (class 7, h04_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "kv_cache_bytes"


def kv_cache_bytes(n_layer: int, n_head: int, n_kv_head: int, head_dim: int, n_tokens: int, bytes_per_value: int,
                   batch_size: int = 1) -> int:
    """Bytes of the KV cache that holds n_tokens tokens of batch_size sequences for this model shape."""
    per_token_per_layer = 2 * n_kv_head * head_dim * bytes_per_value   # one K and one V vector per KV head
    return int(per_token_per_layer * n_layer * n_tokens * batch_size)
