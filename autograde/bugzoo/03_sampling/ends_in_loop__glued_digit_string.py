"""Periodicity tested on the ids' digits glued into a string: [1, 11, 11, 1, 1, 11] reads as three copies (the text: copies of one block of ids). (blind class 10)

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `ends_in_loop__class10_glued_digits.py`."""
import torch

TARGET = "ends_in_loop"


def ends_in_loop(ids: list[int], max_period: int = 20, min_repeats: int = 3) -> bool:
    """True if ids end with one block of 1..max_period tokens repeated at least min_repeats times."""
    ids = list(ids)
    for s in range(1, max_period + 1):
        need = s * min_repeats
        if need > len(ids) or need == 0:
            continue
        tail = ids[len(ids) - need:]
        if "".join(map(str, tail)) == "".join(map(str, tail[:s])) * min_repeats:
            return True
    return False
