"""Red team 15: `if eos_id and t == eos_id` - an EOS id of 0 is falsy, so it never ends a row.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `generate_loop__rt15_eos_zero_falsy.py`."""
import torch

from course_lib.generate import greedy

TARGET = "generate_loop"


def generate_loop(model, prompts, max_new_tokens, step=greedy, eos_id=None, stop_sequences=(), tokenizer=None,
                  generator=None):
    B, width = len(prompts), max(len(p) for p in prompts)
    device = next(iter(model.parameters())).device
    idx = torch.zeros(B, width, dtype=torch.long)
    mask = torch.zeros(B, width, dtype=torch.long)
    for r, p in enumerate(prompts):
        idx[r, width - len(p):] = torch.tensor(p, dtype=torch.long)
        mask[r, width - len(p):] = 1
    idx, mask = idx.to(device), mask.to(device)
    new = [[] for _ in range(B)]
    reason = ["length"] * B
    done = [False] * B
    token_stops = [list(s) for s in stop_sequences if not isinstance(s, str)]
    text_stops = [s for s in stop_sequences if isinstance(s, str)]
    for _ in range(max_new_tokens):
        if all(done):
            break
        with torch.no_grad():
            logits = model(idx, attention_mask=mask)[:, -1, :]
        ids = step(logits) if generator is None else step(logits, generator=generator)
        for r, t in enumerate(ids.tolist()):
            if done[r]:
                continue
            if eos_id and t == eos_id:
                done[r], reason[r] = True, "eos"
                continue
            new[r].append(t)
            hit = any(len(s) > 0 and new[r][-len(s):] == s for s in token_stops)
            if text_stops and not hit:
                text = tokenizer.decode(new[r])
                hit = any(s in text for s in text_stops)
            if hit:
                done[r], reason[r] = True, "stop"
        idx = torch.cat([idx, ids.to(device).view(B, 1)], dim=1)
        mask = torch.cat([mask, torch.ones(B, 1, dtype=torch.long, device=device)], dim=1)
    return [{"tokens": new[r], "finish_reason": reason[r]} for r in range(B)]
