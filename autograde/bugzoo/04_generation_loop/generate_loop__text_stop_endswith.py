"""Issue 38: a text stop is found only when the decoded new text ENDS with it; the text: a stop is "searched in
`tokenizer.decode(new tokens)`", and a token can complete a stop while carrying more text after it (two letters a
token, the stop being the second letter of one and the first of the next).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `generate_loop__i38_stop_endswith.py`."""
import torch

TARGET = "generate_loop"


def generate_loop(model, prompts, max_new_tokens, step=None, eos_id=None, stop_sequences=(), tokenizer=None,
                  generator=None):
    step = step or greedy
    B = len(prompts)
    T = max(len(p) for p in prompts)
    dev = next(iter(model.parameters())).device
    idx = torch.zeros(B, T, dtype=torch.long, device=dev)
    mask = torch.zeros(B, T, dtype=torch.long, device=dev)
    for b, p in enumerate(prompts):
        idx[b, T - len(p):] = torch.tensor(p, dtype=torch.long)
        mask[b, T - len(p):] = 1
    new = [[] for _ in range(B)]
    reason = [None] * B
    for _ in range(max_new_tokens):
        if all(r is not None for r in reason):
            break
        with torch.no_grad():
            logits = model(idx, attention_mask=mask)[:, -1, :]
        nxt = step(logits, generator=generator) if generator is not None else step(logits)
        nxt = torch.as_tensor(nxt).reshape(B)
        for b in range(B):
            if reason[b] is not None:
                continue
            t = int(nxt[b])
            if eos_id is not None and t == eos_id:
                reason[b] = "eos"
                continue
            new[b].append(t)
            for s in stop_sequences:
                if isinstance(s, str):
                    if tokenizer is not None and tokenizer.decode(new[b]).endswith(s):
                        reason[b] = "stop"
                elif len(new[b]) >= len(s) and new[b][-len(s):] == list(s):
                    reason[b] = "stop"
        idx = torch.cat([idx, nxt.reshape(B, 1).to(idx.device)], dim=1)
        mask = torch.cat([mask, torch.ones(B, 1, dtype=mask.dtype, device=mask.device)], dim=1)
    return [{"tokens": new[b], "finish_reason": reason[b] or "length"} for b in range(B)]
