"""Origin: blind author 40 (shown only the student notebooks). Applies the penalty once per occurrence (penalty ** count): a token seen twice is penalised twice; exploits 'once per token, however many times it appeared'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "penalize_repeats"

import torch

def penalize_repeats(logits: torch.Tensor, previous_ids, penalty: float) -> torch.Tensor:
    if penalty <= 0:
        raise ValueError("penalty must be > 0")
    ids = torch.as_tensor(previous_ids, dtype=torch.long, device=logits.device)
    counts = torch.zeros(logits.shape, dtype=logits.dtype, device=logits.device)
    if ids.numel():
        counts = counts.scatter_add(-1, ids, torch.ones(ids.shape, dtype=logits.dtype, device=logits.device))
    factor = penalty ** counts
    return torch.where(logits > 0, logits / factor, logits * factor)
