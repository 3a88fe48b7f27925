"""Red team 12: only the last 28 ids are looked at, the smallest cut that passed the visible check when its
longest cycle spanned 15 ids; a cycle repeated over 240 ids is counted short.

Formerly `find_cycle__rt12_recent_window.py`."""
TARGET = "find_cycle"


def find_cycle(ids, max_period=50, min_repeats=2):
    seq = list(ids.tolist() if hasattr(ids, "tolist") else ids)[-28:]
    for period in range(1, max_period + 1):
        block, count = seq[len(seq) - period:], 0
        while len(block) == period and seq[len(seq) - (count + 1) * period:len(seq) - count * period] == block:
            count += 1
        if count >= min_repeats:
            return (period, count)
    return (0, 0)
