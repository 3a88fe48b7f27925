"""Origin: blind author 40 (shown only the student notebooks). After a hypothesis finishes, keeps the best b live candidates (refills the beam) instead of narrowing it; exploits 'so the beam narrows when a hypothesis finishes: no refill'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "beam_search"

import torch

def _logp(model, ids):
    with torch.no_grad():
        return torch.log_softmax(model(torch.tensor([ids]))[0, -1].double(), dim=-1)


def beam_search(model, prompt_ids, beam_width, max_new_tokens, eos_id, length_penalty=1.0):
    beams, finished = [([], 0.0)], []
    for _ in range(max_new_tokens):
        if not beams:
            break
        cands = []
        for toks, sc in beams:
            lp = _logp(model, list(prompt_ids) + toks)
            cands += [(toks + [t], sc + float(lp[t])) for t in range(lp.shape[0])]
        cands.sort(key=lambda c: -c[1])
        top = cands[:beam_width]
        finished += [c for c in top if c[0][-1] == eos_id]
        beams = [c for c in cands if c[0][-1] != eos_id][:beam_width]
    finished += beams
    norm = lambda c: c[1] / len(c[0]) ** length_penalty
    best = max(finished, key=norm)
    toks = best[0][:-1] if best[0][-1] == eos_id else best[0]
    return toks, norm(best)
