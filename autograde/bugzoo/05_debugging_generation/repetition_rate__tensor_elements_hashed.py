"""Origin: blind author 40 (shown only the student notebooks). Builds n-grams with tuple(ids[i:i+n]): for a LongTensor the elements are 0-dim tensors hashed by identity, so no repeat is ever found; exploits 'ids is a list of ints or a 1-D LongTensor'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "repetition_rate"

def repetition_rate(ids, n: int = 4) -> float:
    if n < 1:
        raise ValueError("n must be >= 1")
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    if not grams:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)
