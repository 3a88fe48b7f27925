"""Origin: blind author 40 (shown only the student notebooks). At temperature 0 takes greedy of the raw logits, skipping the penalty (and filters): a repetition penalty that changes the winner is ignored; exploits 'the most likely token of the processed logits'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "sample_next"

import torch

def sample_next(logits: torch.Tensor, generator: torch.Generator | None = None, **settings) -> torch.Tensor:
    if settings.get("temperature", 1.0) == 0:
        return greedy(logits)
    z = process_logits(logits, **settings)
    return sample(torch.softmax(z.float(), dim=-1), generator)
