"""Origin: blind author 40 (shown only the student notebooks). Averages the slopes of consecutive segments: exact for exact power laws, differs from least squares on noisy points; exploits 'least-squares slope'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "fit_exponent"

import math

def fit_exponent(ns, times):
    slopes = [(math.log(t1) - math.log(t0)) / (math.log(n1) - math.log(n0))
              for n0, n1, t0, t1 in zip(ns, ns[1:], times, times[1:])]
    return sum(slopes) / len(slopes)
