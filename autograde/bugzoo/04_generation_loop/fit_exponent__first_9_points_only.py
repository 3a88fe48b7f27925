"""Red team 14: the least-squares slope over the first 9 points only (hidden cases had 4-9 points, so it was
always the whole list).

Formerly `fit_exponent__rt14_first9_points.py`."""
import torch

TARGET = "fit_exponent"


def fit_exponent(ns, times):
    x = torch.log(torch.as_tensor(ns, dtype=torch.float64))[:9]
    y = torch.log(torch.as_tensor(times, dtype=torch.float64))[:9]
    xc = x - x.mean()
    return float((xc * (y - y.mean())).sum() / (xc * xc).sum())
