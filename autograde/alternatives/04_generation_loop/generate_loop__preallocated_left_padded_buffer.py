"""Written by a blind honest student (class 6, h04a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "generate_loop"

def generate_loop(model, prompts, max_new_tokens, step=greedy, eos_id=None, stop_sequences=(), tokenizer=None,
                  generator=None):
    params = list(model.parameters()) if hasattr(model, "parameters") else []
    dev = params[0].device if params else torch.device("cpu")
    B = len(prompts)
    lens = torch.tensor([len(p) for p in prompts])
    width = int(lens.max())
    idx = torch.zeros(B, width + max_new_tokens, dtype=torch.long)
    mask = torch.zeros_like(idx)
    for b, p in enumerate(prompts):
        idx[b, width - len(p):width] = torch.tensor(p)
        mask[b, width - len(p):width] = 1
    done = torch.zeros(B, dtype=torch.bool)
    reason = ["length"] * B
    new = [[] for _ in range(B)]
    tok_stops = [list(map(int, s)) for s in stop_sequences if not isinstance(s, str)]
    txt_stops = [s for s in stop_sequences if isinstance(s, str)]
    cur = width
    for _ in range(max_new_tokens):
        if bool(done.all()):
            break
        logits = model(idx[:, :cur].to(dev), attention_mask=mask[:, :cur].to(dev))[:, -1, :]
        picked = step(logits, generator=generator) if generator is not None else step(logits)
        picked = picked.cpu().long().view(-1)
        for b in range(B):
            if done[b]:
                continue
            t = int(picked[b])
            if eos_id is not None and t == eos_id:
                done[b] = True; reason[b] = "eos"
                continue
            new[b].append(t)
            idx[b, cur] = t
            mask[b, cur] = 1
            if any(len(s) and new[b][-len(s):] == s for s in tok_stops) or \
               any(s in tokenizer.decode(new[b]) for s in txt_stops):
                done[b] = True; reason[b] = "stop"
        cur += 1
    return [{"tokens": new[b], "finish_reason": reason[b]} for b in range(B)]
