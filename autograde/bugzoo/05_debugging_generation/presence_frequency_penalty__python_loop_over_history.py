"""Origin: blind class 7.

Counts with a Python loop over every history position (counts[b, t] += 1): right numbers, O(B x L) Python
steps where the text says "no Python loop over the vocabulary or over the history" (blind class 7). Caught by
the cost contract: lines run for a history 100 times longer.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `presence_frequency_penalty__class7_history_loop.py`."""
import torch

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits: torch.Tensor, ids: torch.Tensor, *, presence: float = 0.0,
                               frequency: float = 0.0, prompt_len: int = 0) -> torch.Tensor:
    """logits - count * frequency - [count > 0] * presence, counts over the generated ids[:, prompt_len:]."""
    counts = torch.zeros(logits.shape, dtype=torch.float32, device=logits.device)
    for b in range(ids.shape[0]):
        for t in ids[b, prompt_len:].tolist():
            counts[b, t] += 1
    out = logits.float() - counts * frequency - (counts > 0).float() * presence
    return out.to(logits.dtype)
