"""Origin: blind author 40 (shown only the student notebooks). Slope between the first and last point only: exact for exact power laws, not the least-squares slope on noisy data; exploits 'the least-squares slope of log(times) against log(ns)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "fit_exponent"

import math

def fit_exponent(ns, times):
    return (math.log(times[-1]) - math.log(times[0])) / (math.log(ns[-1]) - math.log(ns[0]))
