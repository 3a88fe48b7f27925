"""Origin: blind author 40 (shown only the student notebooks). Counts words with text.split(' '): tabs/newlines do not separate and runs of spaces create empty words; exploits 'any run of spaces, tabs or newlines separates two words'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "tokens_per_word"

def tokens_per_word(enc, text: str) -> float:
    return len(enc.encode(text)) / len(text.split(" "))
