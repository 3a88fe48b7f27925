"""Origin: blind author 40 (shown only the student notebooks). Returns log(softmax(z)): an underflowed probability gives -inf; exploits 'It must give [0, -200] for [0., -200.]' / 'not torch.log(softmax(...))'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "log_softmax"

import torch

def log_softmax(logits: torch.Tensor) -> torch.Tensor:
    return torch.log(softmax(logits))
