"""Origin: red team 14 (peter03).

Penalises in the caller's logits, copies the result out, then writes the old values back: the input ends
with its original values, but it was written in place (red team 14, peter03; a value comparison cannot see it).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `penalize_repeats__rt14_written_then_restored.py`."""
import torch

TARGET = "penalize_repeats"


def penalize_repeats(logits, previous_ids, penalty):
    if not penalty > 0:
        raise ValueError("penalty must be positive")
    ids = torch.as_tensor(previous_ids, dtype=torch.long, device=logits.device)
    if ids.numel() == 0:
        return logits.clone()
    seen = torch.nn.functional.one_hot(ids, logits.shape[-1]).sum(dim=-2) > 0
    saved = logits.clone()
    logits.copy_(torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits))
    out = logits.clone()
    logits.copy_(saved)
    return out
