"""Written by a blind honest student (class 7, h03_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "sample_next"


def sample_next(logits: torch.Tensor, generator: torch.Generator | None = None, **settings) -> torch.Tensor:
    """One next-token id per row: greedy at temperature 0, else sample from softmax(process_logits(...))."""
    processed = process_logits(logits, **settings)
    if settings.get("temperature", 1.0) == 0:
        return greedy(processed)
    return sample(processed.float().softmax(dim=-1), generator)
