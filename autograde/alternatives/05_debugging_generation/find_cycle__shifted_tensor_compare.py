"""Written by a blind honest student (class 6, h05a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "find_cycle"

def find_cycle(ids, max_period=50, min_repeats=2):
    seq = torch.as_tensor(ids, dtype=torch.long).reshape(-1)
    L = seq.numel()
    for s in range(1, min(max_period, L) + 1):
        if L == s:
            m = s
        else:
            eq = (seq[s:] == seq[:-s]).flip(0)          # eq[k]: ids[L-1-k] == ids[L-1-k-s]
            bad = (~eq).nonzero()
            m = s + (int(bad[0]) if bad.numel() else int(eq.numel()))
        if m // s >= min_repeats:
            return int(s), int(m // s)
    return 0, 0
