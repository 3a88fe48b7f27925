"""The prefix matched as a glued digit string: (1, 23) "matches" (12, 3) and a token is banned wrongly (the text: (last n-1 ids) + (t,) is an n-gram of the row). (blind class 10)

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `ban_repeated_ngrams__class10_glued_digits.py`."""
import torch

TARGET = "ban_repeated_ngrams"


def ban_repeated_ngrams(logits: torch.Tensor, ids: torch.Tensor, n: int) -> torch.Tensor:
    """-inf for every token that would complete an n-gram already in its row of ids (O(L * n), not O(V))."""
    if n < 1:
        raise ValueError("n must be >= 1")
    out = logits.clone()
    ids = torch.as_tensor(ids, dtype=torch.long)
    for b in range(out.shape[0]):
        seq = ids[b].tolist()
        L = len(seq)
        if L < n:
            continue
        prefix = seq[L - (n - 1):] if n > 1 else []
        banned = set()
        for i in range(L - n + 1):
            if "".join(map(str, seq[i:i + n - 1])) == "".join(map(str, prefix)):
                banned.add(seq[i + n - 1])
        if banned:
            out[b, torch.tensor(sorted(banned), dtype=torch.long, device=out.device)] = float("-inf")
    return out
