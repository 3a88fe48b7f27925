"""Returns the intercept of the log-log line instead of its slope.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

import torch

from course_lib.generate import greedy

TARGET = "fit_exponent"


def fit_exponent(ns, times):
    """Exponent a of times ~ c * ns**a: least-squares slope of log(times) against log(ns)."""
    x = torch.log(torch.as_tensor(ns, dtype=torch.float64))
    y = torch.log(torch.as_tensor(times, dtype=torch.float64))
    xc = x - x.mean()
    a = (xc * (y - y.mean())).sum() / (xc * xc).sum()
    return float(y.mean() - a * x.mean())
