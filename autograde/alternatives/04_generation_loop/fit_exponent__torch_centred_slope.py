"""Written by a blind honest student (class 7, h04_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "fit_exponent"


def fit_exponent(ns: list[float], times: list[float]) -> float:
    """Exponent a of times ~ c * ns**a: least-squares slope of log(times) against log(ns)."""
    x = torch.tensor(ns, dtype=torch.float64).log()
    y = torch.tensor(times, dtype=torch.float64).log()
    xc, yc = x - x.mean(), y - y.mean()
    return float((xc * yc).sum() / (xc * xc).sum())
