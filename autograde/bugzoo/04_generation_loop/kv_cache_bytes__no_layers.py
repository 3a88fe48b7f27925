"""Forgets that every layer has its own cache.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

import torch

from course_lib.generate import greedy

TARGET = "kv_cache_bytes"


def kv_cache_bytes(n_layer, n_head, n_kv_head, head_dim, n_tokens, bytes_per_value, batch_size=1):
    """Bytes of a KV cache: 2 (K and V) x layers x KV heads x head_dim x tokens x bytes x batch."""
    return 2 * n_kv_head * head_dim * n_tokens * bytes_per_value * batch_size
