"""Origin: blind author 40 (shown only the student notebooks). Loop initialised with the prompt's pass, so 0 new tokens cost prompt_len instead of 0; exploits '0 new tokens cost 0'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "positions_without_cache"

def positions_without_cache(prompt_len: int, n_new: int) -> int:
    total = prompt_len
    for i in range(1, n_new):
        total += prompt_len + i
    return total
