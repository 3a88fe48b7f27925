"""Origin: blind author 40 (shown only the student notebooks). Keeps appending tokens to rows that already stopped on a token stop (only EOS freezes a row); exploits 'a finished flag per row freezes its output while the others continue'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "generate_loop"

import torch
from course_lib.generate import greedy


def _pad(seqs):
    W = max(len(s) for s in seqs)
    idx = torch.zeros(len(seqs), W, dtype=torch.long)
    mask = torch.zeros(len(seqs), W, dtype=torch.long)
    for r, s in enumerate(seqs):
        idx[r, W - len(s):] = torch.tensor(s, dtype=torch.long)
        mask[r, W - len(s):] = 1
    return idx, mask


def generate_loop(model, prompts, max_new_tokens, step=greedy, eos_id=None, stop_sequences=(), tokenizer=None,
                  generator=None):
    dev = next(model.parameters()).device
    B = len(prompts)
    seqs = [list(p) for p in prompts]
    new = [[] for _ in range(B)]
    reason = [None] * B
    for _ in range(max_new_tokens):
        if all(r is not None for r in reason):
            break
        idx, mask = _pad(seqs)
        with torch.no_grad():
            logits = model(idx.to(dev), attention_mask=mask.to(dev))[:, -1, :]
        ids = step(logits, generator=generator) if generator is not None else step(logits)
        for r in range(B):
            if reason[r] == "eos":
                continue
            t = int(ids[r])
            if eos_id is not None and t == eos_id:
                reason[r] = "eos"
                continue
            new[r].append(t)
            seqs[r].append(t)
            for s in stop_sequences:
                if isinstance(s, str):
                    hit = s in tokenizer.decode(new[r])
                else:
                    hit = len(new[r]) >= len(s) and new[r][-len(s):] == list(s)
                if hit and reason[r] is None:
                    reason[r] = "stop"
                    break
    return [{"tokens": new[r], "finish_reason": reason[r] or "length"} for r in range(B)]
