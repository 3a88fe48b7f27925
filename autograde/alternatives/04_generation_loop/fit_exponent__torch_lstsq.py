"""Written by a blind honest student (class 6, h04b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "fit_exponent"

def fit_exponent(ns, times):
    x = torch.log(torch.tensor(ns, dtype=torch.float64))
    y = torch.log(torch.tensor(times, dtype=torch.float64))
    A = torch.stack([x, torch.ones_like(x)], dim=1)
    sol = torch.linalg.lstsq(A, y[:, None]).solution
    return float(sol[0, 0])
