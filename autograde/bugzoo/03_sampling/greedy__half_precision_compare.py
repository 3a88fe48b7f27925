"""Origin: blind author 40 (shown only the student notebooks). Casts to float16 before argmax 'for speed': distinct float32 logits closer than fp16 resolution become ties and go to the lower id; exploits 'float16/bfloat16 inputs too' by treating every input as one.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "greedy"

import torch

def greedy(logits: torch.Tensor) -> torch.Tensor:
    return logits.half().argmax(dim=-1)
