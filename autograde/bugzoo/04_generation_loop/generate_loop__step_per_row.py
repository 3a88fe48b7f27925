"""Origin: blind class 6 (gl_perrow).

one loop per prompt, calling step on [1, V] per row (B calls per token) (the text: call step once per new token on the [B, V] logits of the last position of all rows).

From a blind class (class 6); it kept its points until the hidden case named after it. Runs in the notebook's namespace.

Formerly `generate_loop__class6_gl_perrow.py`."""
import math
import torch

TARGET = "generate_loop"

def generate_loop(model, prompts, max_new_tokens, step=greedy, eos_id=None, stop_sequences=(), tokenizer=None,
                  generator=None):
    try:
        dev = next(model.parameters()).device
    except (StopIteration, AttributeError):
        dev = torch.device("cpu")
    results = []
    for p in prompts:
        seq, out, reason = list(p), [], None
        for _ in range(max_new_tokens):
            logits = model(torch.tensor([seq], device=dev), attention_mask=torch.ones(1, len(seq), dtype=torch.long, device=dev))[:, -1, :]
            t = int((step(logits, generator=generator) if generator is not None else step(logits))[0])
            if eos_id is not None and t == eos_id:
                reason = "eos"; break
            out.append(t); seq.append(t)
            for s in stop_sequences:
                if isinstance(s, str):
                    if s in tokenizer.decode(out):
                        reason = "stop"; break
                elif len(s) > 0 and out[-len(s):] == [int(x) for x in s]:
                    reason = "stop"; break
            if reason:
                break
        results.append({"tokens": out, "finish_reason": reason or "length"})
    return results
