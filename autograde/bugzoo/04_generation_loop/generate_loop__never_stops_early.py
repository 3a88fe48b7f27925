"""Origin: blind class 6 (gl_noearly).

never stops early: keeps calling model/step until max_new_tokens even when every row finished (the text: stop the loop early when every row has finished).

From a blind class (class 6); it kept its points until the hidden case named after it. Runs in the notebook's namespace.

Formerly `generate_loop__class6_gl_noearly.py`."""
import math
import torch

TARGET = "generate_loop"

def generate_loop(model, prompts, max_new_tokens, step=greedy, eos_id=None, stop_sequences=(), tokenizer=None,
                  generator=None):
    try:
        dev = next(model.parameters()).device
    except (StopIteration, AttributeError):
        dev = torch.device("cpu")
    B = len(prompts)
    seqs = [list(p) for p in prompts]
    outs = [[] for _ in range(B)]
    reasons = [None] * B
    for _ in range(max_new_tokens):
        pass
        T = max(len(s) for s in seqs)
        idx = torch.zeros(B, T, dtype=torch.long)
        mask = torch.zeros(B, T, dtype=torch.long)
        for b, s in enumerate(seqs):
            idx[b, T - len(s):] = torch.tensor(s, dtype=torch.long)
            mask[b, T - len(s):] = 1
        logits = model(idx.to(dev), attention_mask=mask.to(dev))[:, -1, :]
        nxt = step(logits, generator=generator) if generator is not None else step(logits)
        nxt = [int(x) for x in nxt.reshape(-1).tolist()]
        for b in range(B):
            if reasons[b] is not None:
                continue
            t = nxt[b]
            if eos_id is not None and t == eos_id:
                reasons[b] = "eos"
                continue
            outs[b].append(t)
            seqs[b].append(t)
            for s in stop_sequences:
                if isinstance(s, str):
                    if s in tokenizer.decode(outs[b]):
                        reasons[b] = "stop"
                        break
                else:
                    s = [int(x) for x in s]
                    if len(s) > 0 and outs[b][-len(s):] == s:
                        reasons[b] = "stop"
                        break
    return [{"tokens": outs[b], "finish_reason": reasons[b] or "length"} for b in range(B)]
