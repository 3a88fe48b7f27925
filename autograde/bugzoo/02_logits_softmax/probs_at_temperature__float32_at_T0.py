"""Issue 35 (the visible checks did not enforce float64 at T = 0): the T = 0 one-hot is built in float32 whatever the logits' dtype; float64 logits get float32 probabilities there.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "probs_at_temperature"


def probs_at_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    if T < 0:
        raise ValueError(f"T must be >= 0, got {T}")
    if T == 0:
        top = logits == logits.max(dim=-1, keepdim=True).values
        return top.float() / top.sum(dim=-1, keepdim=True)
    z = logits / T
    return torch.softmax(z - z.max(dim=-1, keepdim=True).values, dim=-1)
