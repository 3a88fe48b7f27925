"""Blind 38 (issue 38's blind author, who read only the notebook; caught by the hidden check, now by the visible one too): Checks `penalty < 0`, so penalty = 0 is accepted (positive seen logits become inf); text: "Raise `ValueError` if `penalty <= 0`".

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "penalize_repeats"


def penalize_repeats(logits: torch.Tensor, previous_ids, penalty: float) -> torch.Tensor:
    """CTRL penalty: seen tokens' positive logits / penalty, negative ones * penalty (once per token)."""
    if penalty < 0:
        raise ValueError(f"penalty must be positive, got {penalty}")
    ids = torch.as_tensor(previous_ids, dtype=torch.long, device=logits.device)
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    if ids.numel():
        seen = seen.scatter(-1, ids, True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
