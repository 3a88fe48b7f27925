"""At T = 0 every logit within 1e-4 of the max survives: a near-tie is not a tie (the text: the largest logit keeps its value, every other token -inf). (blind class 10)

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `apply_temperature__class10_near_tie.py`."""
import torch

TARGET = "apply_temperature"


def apply_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    """logits / T; T = 0 keeps only the largest logit(s) of each row (greedy), without dividing by zero."""
    if T < 0:
        raise ValueError("T must be >= 0")
    if T == 0:
        mx = logits.max(dim=-1, keepdim=True).values
        return logits.masked_fill(logits < mx - 1e-4, float("-inf"))
    return logits / T
