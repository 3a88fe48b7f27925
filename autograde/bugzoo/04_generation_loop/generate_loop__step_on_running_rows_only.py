"""Origin: blind class 7.

Hands the step only the logits of the rows still running ([B_running, V]) once a row has finished (blind
class 7). The text: the step is called "once per new token on the [B, V] logits of the last position of all
rows"; a step that reads across the batch (a sampler with one generator, or the checks' ranked step, which
treats each row by its place in the batch) then sees another batch. Caught by the ranked step with one row
finishing first.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `generate_loop__class7_step_on_running_rows.py`."""
import torch

from course_lib.generate import greedy

TARGET = "generate_loop"


def generate_loop(model: torch.nn.Module, prompts: list[list[int]], max_new_tokens: int, step=greedy,
                  eos_id: int | None = None, stop_sequences: tuple | list = (), tokenizer=None,
                  generator: torch.Generator | None = None) -> list[dict]:
    """Generate up to max_new_tokens per prompt; stop rows on EOS or a stop sequence; one dict per prompt."""
    B = len(prompts)
    dev = next(model.parameters()).device
    L = max(len(p) for p in prompts)
    idx = torch.zeros(B, L, dtype=torch.long, device=dev)
    mask = torch.zeros(B, L, dtype=torch.long, device=dev)
    for b, p in enumerate(prompts):
        idx[b, L - len(p):] = torch.tensor(p, dtype=torch.long, device=dev)
        mask[b, L - len(p):] = 1
    new = [[] for _ in range(B)]
    reason = [None] * B
    for _ in range(max_new_tokens):
        if all(r is not None for r in reason):
            break
        with torch.no_grad():
            logits = model(idx, attention_mask=mask)[:, -1, :]
        active = [b for b in range(B) if reason[b] is None]
        sub = logits[active]
        picked = step(sub, generator=generator) if generator is not None else step(sub)
        nxt = torch.zeros(B, dtype=torch.long, device=dev)
        nxt[active] = picked.reshape(-1).to(dev, torch.long)
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
                    if s in tokenizer.decode(new[b]):
                        reason[b] = "stop"
                        break
                else:
                    s = list(s)
                    if len(s) > 0 and new[b][-len(s):] == s:
                        reason[b] = "stop"
                        break
        idx = torch.cat([idx, nxt.reshape(B, 1).to(dev, torch.long)], dim=1)
        mask = torch.cat([mask, torch.ones(B, 1, dtype=torch.long, device=dev)], dim=1)
    return [{"tokens": new[b], "finish_reason": reason[b] or "length"} for b in range(B)]
