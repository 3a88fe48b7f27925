"""Origin: blind author 40 (shown only the student notebooks). Creates the 'seen' table with torch.zeros(logits.shape, dtype=torch.bool) on the CPU; exploits 'any tensor you create goes on the device of logits'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "penalize_repeats"

import torch

def penalize_repeats(logits: torch.Tensor, previous_ids, penalty: float) -> torch.Tensor:
    if penalty <= 0:
        raise ValueError("penalty must be > 0")
    ids = torch.as_tensor(previous_ids, dtype=torch.long)
    seen = torch.zeros(logits.shape, dtype=torch.bool)
    if ids.numel():
        seen = seen.scatter(-1, ids.cpu(), True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
