"""Origin: blind class 7.

Inverse CDF with a float32 cumulative sum, u not scaled by the total, searchsorted's default right=False
(the first c_i >= u) and a clamp to V - 1 (blind class 7). Right in distribution up to ~1e-7, so no frequency
test sees it; but u = 0 returns token 0 when its probability is 0, and u above the total returns the last token,
whatever its probability. The text: "the first i with c_i > u", "scale u by the actual total", "cumulative sum
in float64", "tokens with probability 0 must never be returned".

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sample__class7_unscaled_left_clamped.py`."""
import torch

TARGET = "sample"


def sample(probs, generator):
    cdf = torch.cumsum(probs, dim=-1)
    u = torch.rand(probs.shape[:-1] + (1,), generator=generator, dtype=cdf.dtype)
    idx = torch.searchsorted(cdf.contiguous(), u)
    return idx.squeeze(-1).clamp(max=probs.shape[-1] - 1)
