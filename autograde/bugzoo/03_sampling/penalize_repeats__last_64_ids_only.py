"""Red team 14: only the last 64 ids of each history are penalised (llama.cpp's repeat_last_n = 64; every hidden
history was shorter than 64, the text penalises every previous id).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `penalize_repeats__rt14_last_64_ids.py`."""
import torch

TARGET = "penalize_repeats"


def penalize_repeats(logits, previous_ids, penalty):
    if penalty <= 0:
        raise ValueError(f"penalty must be > 0, got {penalty!r}")
    ids = torch.as_tensor(previous_ids, dtype=torch.long, device=logits.device)[..., -64:]
    if ids.numel() == 0:
        return logits.clone()
    if ids.ndim < logits.ndim:
        ids = ids.expand(logits.shape[:-1] + ids.shape[-1:])
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device).scatter(-1, ids, True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
