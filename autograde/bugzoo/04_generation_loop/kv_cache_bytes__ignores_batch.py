"""Origin: blind author 40 (shown only the student notebooks). Forgets batch_size: right for one sequence, too small for batches; exploits 'for every sequence in the batch' / batch_size parameter.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "kv_cache_bytes"

def kv_cache_bytes(n_layer, n_head, n_kv_head, head_dim, n_tokens, bytes_per_value, batch_size=1):
    return int(2 * n_layer * n_kv_head * head_dim * n_tokens * bytes_per_value)
