"""Blind 38 (issue 38's blind author, who read only the notebook; caught only after issue 38's cases): Inverse CDF is right, but the result is .squeeze()d, so a [1, V] batch gives a 0-dim id, not shape [1]; text: "Return one token id per row ... shape `[...]`".

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sample__blind38_squeeze_batch_of_one.py`."""
import torch

TARGET = "sample"


def sample(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One token id per row of probs [..., V], drawn by inverse-CDF sampling with `generator`."""
    c = probs.to(torch.float64).cumsum(dim=-1)
    u = torch.rand(c.shape[:-1] + (1,), generator=generator, dtype=torch.float64) * c[..., -1:]
    ids = (c <= u).sum(dim=-1, keepdim=True)
    ids = torch.minimum(ids, torch.full_like(ids, probs.shape[-1] - 1))
    return ids.squeeze().long()
