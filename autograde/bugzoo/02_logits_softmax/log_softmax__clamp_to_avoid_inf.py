"""Origin: blind author 40 (shown only the student notebooks). Clamps z - m at -1e4 'to avoid -inf': a -inf logit gives about -1e4 instead of -inf; exploits 'a -inf logit gives -inf'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "log_softmax"

import torch

def log_softmax(logits: torch.Tensor) -> torch.Tensor:
    s = (logits - logits.amax(dim=-1, keepdim=True)).clamp(min=-1e4)
    return s - torch.log(torch.exp(s).sum(dim=-1, keepdim=True))
