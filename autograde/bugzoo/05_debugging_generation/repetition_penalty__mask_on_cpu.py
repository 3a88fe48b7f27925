"""Blind 38 (issue 38's blind author, who read only the notebook; caught after the cases of its last round): Creates the "seen" table on the CPU (torch.zeros without device=), failing for logits on a GPU; text: "create any new tensor on the device of `logits` (`device=logits.device`)".

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits: torch.Tensor, ids: torch.Tensor, penalty: float, *, prompt_len: int = 0,
                       count_prompt: bool = True, window: int | None = None) -> torch.Tensor:
    """CTRL penalty on [B, V] logits for every distinct token of each row's counted history."""
    if penalty <= 0:
        raise ValueError(f"penalty must be > 0, got {penalty}")
    hist = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        hist = hist[:, hist.shape[1] - min(window, hist.shape[1]):]
    seen = torch.zeros(logits.shape, dtype=torch.bool)
    if hist.numel():
        seen = seen.scatter(1, hist.cpu(), True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
