"""Red team 15: `if eos_id and toks[-1] == eos_id` - an EOS id of 0 is falsy, so no hypothesis ever finishes.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `beam_search__rt15_eos_zero_falsy.py`."""
import torch

TARGET = "beam_search"


def beam_search(model, prompt_ids, beam_width, max_new_tokens, eos_id, length_penalty=1.0):
    beams = [([], 0.0)]
    finished = []
    for _ in range(max_new_tokens):
        if not beams:
            break
        cands = []
        idx = torch.tensor([list(prompt_ids) + toks for toks, _ in beams])
        with torch.no_grad():
            logp = torch.log_softmax(model(idx)[:, -1].double(), dim=-1)
        for (toks, score), row in zip(beams, logp):
            top = torch.topk(row, min(beam_width, row.shape[0]))
            cands += [(score + v, toks + [t]) for v, t in zip(top.values.tolist(), top.indices.tolist())]
        cands.sort(key=lambda c: -c[0])
        beams = []
        for score, toks in cands[:beam_width]:
            (finished if eos_id and toks[-1] == eos_id else beams).append((toks, score))
    finished += beams

    def norm(h):
        return h[1] / len(h[0]) ** length_penalty
    best = max(finished, key=norm)
    toks = best[0][:-1] if eos_id and best[0] and best[0][-1] == eos_id else best[0]
    return toks, norm(best)
