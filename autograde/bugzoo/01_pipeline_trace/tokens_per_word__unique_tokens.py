"""Counts distinct token ids: repeated tokens are counted once.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "tokens_per_word"


def tokens_per_word(enc, text):
    return len(set(enc.encode(text))) / len(text.split())
