"""Written by a blind honest student (class 7, h03_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "sample"


def sample(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One token id per row of probs [..., V], drawn by inverse-CDF sampling with `generator`."""
    batch = probs.shape[:-1]
    p = probs.reshape(-1, probs.shape[-1]).to(torch.float64)
    c = p.cumsum(-1)
    u = torch.rand(p.shape[0], 1, generator=generator, dtype=torch.float64) * c[:, -1:]
    idx = (c <= u).sum(-1)
    idx = torch.minimum(idx, torch.tensor(p.shape[-1] - 1))
    return idx.reshape(batch).long()
