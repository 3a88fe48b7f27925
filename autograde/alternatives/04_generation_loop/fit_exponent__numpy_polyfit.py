"""numpy.polyfit of log(times) on log(ns): the slope is the exponent."""
import numpy as np

TARGET = "fit_exponent"


def fit_exponent(ns, times):
    return float(np.polyfit(np.log(np.asarray(ns, dtype=float)), np.log(np.asarray(times, dtype=float)), 1)[0])
