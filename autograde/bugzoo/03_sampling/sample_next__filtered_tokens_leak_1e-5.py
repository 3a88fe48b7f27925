"""Issue 38: the filtered tokens share a chance of 1e-5 per draw ("smoothing" so that no probability is exactly 0,
kept small so that it "changes nothing"). The text: top-k / top-p / min-p remove tokens, and the draw is from
the processed logits' softmax, where a removed token has probability 0. A leak this small is never seen in
4000 draws; only the 7e5-draw case (autograde/hidden/sampling.py, _sample_next_leak_case) sees it.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sample_next__i38_leaks_1e-5.py`."""
import torch

TARGET = "sample_next"


def sample_next(logits, generator=None, **settings):
    x = process_logits(logits, **settings)
    if settings.get("temperature", 1.0) == 0:
        return greedy(x)
    probs = torch.softmax(x.float(), dim=-1).double()
    removed = probs == 0
    n = removed.sum(dim=-1, keepdim=True).clamp_min(1)
    probs = torch.where(removed, 1e-5 / n, probs * (1 - 1e-5 * removed.any(dim=-1, keepdim=True)))
    return sample(probs, generator)
