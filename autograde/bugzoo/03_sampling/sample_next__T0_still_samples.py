"""Origin: blind author 40 (shown only the student notebooks). At temperature 0 still samples from softmax of the greedy mask: tied maxima are drawn at random and the generator advances; exploits 'at temperature == 0 the step is deterministic ... found by your greedy, with no random number drawn'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "sample_next"

import torch

def sample_next(logits: torch.Tensor, generator: torch.Generator | None = None, **settings) -> torch.Tensor:
    z = process_logits(logits, **settings)
    return sample(torch.softmax(z.float(), dim=-1), generator)
