"""Origin: blind author 40 (shown only the student notebooks). Picks the answer by the raw sum of log p (then normalises only the returned score): same at length_penalty 0, a different (shorter) answer when finished hypotheses of different lengths compete; exploits 'answer: the finished hypothesis with the best length-normalised score'.

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
        beams = []
        for c in cands[:beam_width]:
            (finished if c[0][-1] == eos_id else beams).append(c)
    finished += beams
    best = max(finished, key=lambda c: c[1])
    toks = best[0][:-1] if best[0][-1] == eos_id else best[0]
    return toks, best[1] / len(best[0]) ** length_penalty
