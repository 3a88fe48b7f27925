"""Issue 38: returns int32 ids; the text fixes the dtype ("shape `[...]`, dtype `torch.long`"), but until issue 38 the
sampler comparators accepted any integer dtype (their messages already asked for a LongTensor).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sample__i38_int32_ids.py`."""
import torch

TARGET = "sample"


def sample(probs, generator):
    cdf = probs.double().cumsum(dim=-1)
    u = torch.rand(probs.shape[:-1] + (1,), generator=generator, dtype=torch.float64) * cdf[..., -1:]
    return torch.searchsorted(cdf, u, right=True, out_int32=True).clamp(max=probs.shape[-1] - 1).squeeze(-1)
