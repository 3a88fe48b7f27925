"""Written by a blind honest student (class 7, h04_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

from course_lib.generate import greedy

TARGET = "generate_loop"


def generate_loop(model: torch.nn.Module, prompts: list[list[int]], max_new_tokens: int, step=greedy,
                  eos_id: int | None = None, stop_sequences: tuple | list = (), tokenizer=None,
                  generator: torch.Generator | None = None) -> list[dict]:
    """Generate up to max_new_tokens per prompt; stop rows on EOS or a stop sequence; one dict per prompt."""
    device = next(model.parameters()).device
    B, T0 = len(prompts), max(map(len, prompts))
    rows = [[0] * (T0 - len(p)) + list(p) for p in prompts]
    masks = [[0] * (T0 - len(p)) + [1] * len(p) for p in prompts]
    out = [{"tokens": [], "finish_reason": "length"} for _ in prompts]
    finished = [False] * B
    token_stops = [tuple(s) for s in stop_sequences if not isinstance(s, str)]
    text_stops = [s for s in stop_sequences if isinstance(s, str)]
    for _ in range(max_new_tokens):
        if all(finished):
            break
        idx = torch.tensor(rows, device=device)
        mask = torch.tensor(masks, device=device)
        with torch.no_grad():
            last = model(idx, attention_mask=mask)[:, -1, :]
        kwargs = {"generator": generator} if generator is not None else {}
        picked = step(last, **kwargs).tolist()
        for b in range(B):
            rows[b].append(int(picked[b]))
            masks[b].append(1)
            if finished[b]:
                continue
            t = int(picked[b])
            if eos_id is not None and t == eos_id:
                finished[b], out[b]["finish_reason"] = True, "eos"
                continue
            out[b]["tokens"].append(t)
            toks = tuple(out[b]["tokens"])
            hit = any(len(s) and toks[-len(s):] == s for s in token_stops)
            if not hit and text_stops:
                text = tokenizer.decode(list(toks))
                hit = any(s in text for s in text_stops)
            if hit:
                finished[b], out[b]["finish_reason"] = True, "stop"
    return out
