"""Written by a blind honest student (class 7, h01_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "causal_mask"


def causal_mask(T: int) -> torch.Tensor:
    """Bool [T, T]: True where query i may attend to key j, i.e. j <= i."""
    return torch.ones(T, T).tril().bool()
