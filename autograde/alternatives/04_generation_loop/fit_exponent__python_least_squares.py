"""Written by a blind honest student (class 6, h04a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "fit_exponent"

def fit_exponent(ns, times):
    x = [math.log(n) for n in ns]
    y = [math.log(t) for t in times]
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    return sxy / sxx
