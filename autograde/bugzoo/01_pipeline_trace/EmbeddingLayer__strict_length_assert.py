"""Origin: blind author 40 (shown only the student notebooks). Asserts T < max_seq_len, so a sequence of exactly max_seq_len tokens raises; exploits '(T <= max_seq_len)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

# The checks reach the class through the given helper run_embedding_layer (copied below).
TARGET = "run_embedding_layer"

import torch
from torch import nn

class EmbeddingLayer(nn.Module):
    def __init__(self, vocab_size: int, d_model: int, max_seq_len: int):
        super().__init__()
        self.max_seq_len = max_seq_len
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(max_seq_len, d_model)

    def forward(self, token_ids: torch.Tensor) -> torch.Tensor:
        T = token_ids.shape[1]
        if T >= self.max_seq_len:
            raise ValueError(f"sequence of {T} tokens is too long (max {self.max_seq_len})")
        pos = torch.arange(T, device=token_ids.device)
        return self.token_embedding(token_ids) + self.position_embedding(pos)


def run_embedding_layer(token_table, position_table, token_ids):
    """The notebook's given helper, unchanged (the checks call it)."""
    (vocab_size, d_model), max_seq_len = token_table.shape, position_table.shape[0]
    layer = EmbeddingLayer(vocab_size, d_model, max_seq_len).to(token_table.device)
    with torch.no_grad():
        for name, table in [("token_embedding", token_table), ("position_embedding", position_table)]:
            weight = getattr(layer, name).weight
            if weight.shape != table.shape:
                raise ValueError(f"layer.{name}.weight has shape {tuple(weight.shape)}, expected {tuple(table.shape)}")
            weight.copy_(table)
        return layer(token_ids)
