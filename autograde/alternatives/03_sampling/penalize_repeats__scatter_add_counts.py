"""Written by a blind honest student (class 7, h03_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "penalize_repeats"


def penalize_repeats(logits: torch.Tensor, previous_ids, penalty: float) -> torch.Tensor:
    """CTRL penalty: seen tokens' positive logits / penalty, negative ones * penalty (once per token)."""
    if penalty <= 0:
        raise ValueError("penalty must be > 0")
    prev = torch.as_tensor(previous_ids, dtype=torch.long, device=logits.device).reshape(*logits.shape[:-1], -1)
    counts = torch.zeros(logits.shape, dtype=torch.int64, device=logits.device)
    counts = counts.scatter_add(-1, prev, torch.ones_like(prev))
    seen = counts > 0
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
