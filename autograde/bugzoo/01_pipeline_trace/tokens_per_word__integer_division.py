"""Integer division: 7 // 5 == 1.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "tokens_per_word"


def tokens_per_word(enc, text):
    return len(enc.encode(text)) // len(text.split())
