"""Written by a blind honest student (class 7, h01_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "causal_mask"


def causal_mask(T: int) -> torch.Tensor:
    """Bool [T, T]: True where query i may attend to key j, i.e. j <= i."""
    i = torch.arange(T).unsqueeze(1)
    j = torch.arange(T).unsqueeze(0)
    return j <= i
