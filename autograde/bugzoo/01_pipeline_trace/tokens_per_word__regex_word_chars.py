"""Origin: blind author 40 (shown only the student notebooks). Counts words as runs of \w characters: '$89.99' becomes two words and an emoji none; exploits 'A word is a maximal run of non-whitespace characters'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "tokens_per_word"

import re

def tokens_per_word(enc, text: str) -> float:
    return len(enc.encode(text)) / len(re.findall(r"\w+", text))
