"""T = 0 replaced by a tiny temperature: one-hot only while the top logits are far apart.

Found by a blind class (session 8).
Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "probs_at_temperature"


def probs_at_temperature(logits, T):
    if T < 0:
        raise ValueError("temperature must be >= 0")
    z = logits / max(T, 1e-8)
    e = torch.exp(z - z.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)
