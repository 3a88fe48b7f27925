"""Written by a blind honest student (class 7, h03_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "sample"


def sample(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One token id per row of probs [..., V], drawn by inverse-CDF sampling with `generator`."""
    flat = probs.reshape(-1, probs.shape[-1]).double()
    ids = torch.multinomial(flat, 1, generator=generator).squeeze(-1)
    return ids.reshape(probs.shape[:-1]).long()
