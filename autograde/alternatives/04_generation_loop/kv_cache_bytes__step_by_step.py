"""The same product, built up one factor at a time."""

TARGET = "kv_cache_bytes"


def kv_cache_bytes(n_layer, n_head, n_kv_head, head_dim, n_tokens, bytes_per_value, batch_size=1):
    per_token_per_layer = 2 * n_kv_head * head_dim * bytes_per_value      # K and V
    return per_token_per_layer * n_layer * n_tokens * batch_size
