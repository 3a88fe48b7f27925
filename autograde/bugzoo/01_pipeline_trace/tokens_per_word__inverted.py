"""Words per token instead of tokens per word.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "tokens_per_word"


def tokens_per_word(enc, text):
    return len(text.split()) / len(enc.encode(text))
