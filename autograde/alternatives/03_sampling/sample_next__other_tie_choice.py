"""sample_next whose top-p keeps the highest-id token among ties at the cut: samples differ from the reference's
per token, but the total probability of each group of tied tokens is the same (issue 16)."""
import torch

TARGET = "sample_next"


def _top_p_last_tied(logits, p):
    V = logits.shape[-1]
    sorted_x, order = torch.sort(logits.float().flip(-1), dim=-1, descending=True, stable=True)
    order = V - 1 - order
    probs = torch.softmax(sorted_x, dim=-1)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    keep_sorted[..., :1] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def sample_next(logits, generator=None, **settings):
    top_p = settings.pop("top_p", 1.0)
    x = process_logits(logits, **settings)
    if top_p < 1.0:
        x = _top_p_last_tied(x, top_p)
    if settings.get("temperature", 1.0) == 0:
        return greedy(x)
    return sample(torch.softmax(x.float(), dim=-1), generator)
