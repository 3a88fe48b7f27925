"""Written by a blind honest student (class 7, h04_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "fit_exponent"


def fit_exponent(ns: list[float], times: list[float]) -> float:
    """Exponent a of times ~ c * ns**a: least-squares slope of log(times) against log(ns)."""
    slope, _ = np.polyfit(np.log10(ns), np.log10(times), 1)
    return float(slope)
