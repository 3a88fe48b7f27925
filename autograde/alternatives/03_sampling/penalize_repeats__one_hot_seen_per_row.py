"""Written by a blind honest student (class 7, h03_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "penalize_repeats"


def penalize_repeats(logits: torch.Tensor, previous_ids, penalty: float) -> torch.Tensor:
    """CTRL penalty: seen tokens' positive logits / penalty, negative ones * penalty (once per token)."""
    if not penalty > 0:
        raise ValueError("penalty must be > 0")
    prev = torch.as_tensor(previous_ids, device=logits.device).long()
    prev = prev.reshape(*logits.shape[:-1], -1)
    V = logits.shape[-1]
    seen = torch.nn.functional.one_hot(prev, V).sum(dim=-2) > 0 if prev.shape[-1] > 0 else \
        torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    scaled = torch.where(logits > 0, logits / penalty, logits * penalty)
    return torch.where(seen, scaled, logits)
