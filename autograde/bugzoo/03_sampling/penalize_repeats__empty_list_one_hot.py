"""Origin: blind author 40 (shown only the student notebooks). Builds 'seen' with F.one_hot(torch.tensor(previous_ids), V): an empty list becomes a float tensor and one_hot raises; exploits 'an empty list is an empty history: mind the dtype a tensor made from [] gets'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "penalize_repeats"

import torch
import torch.nn.functional as F

def penalize_repeats(logits: torch.Tensor, previous_ids, penalty: float) -> torch.Tensor:
    if penalty <= 0:
        raise ValueError("penalty must be > 0")
    ids = previous_ids if torch.is_tensor(previous_ids) else torch.tensor(previous_ids, device=logits.device)
    seen = F.one_hot(ids.to(logits.device), logits.shape[-1]).sum(dim=-2) > 0
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
