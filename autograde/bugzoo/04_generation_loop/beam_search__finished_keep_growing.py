"""Keeps expanding beams after they produced EOS.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

import torch

from course_lib.generate import greedy

TARGET = "beam_search"


def beam_search(model, prompt_ids, beam_width, max_new_tokens, eos_id, length_penalty=1.0):
    """Width-b beam search; returns (best new tokens without EOS, sum log p / length ** length_penalty)."""
    beams = [([], 0.0)]                                  # live hypotheses: (new tokens, sum of log p)
    finished = []                                        # (new tokens incl. EOS, sum of log p)
    for _ in range(max_new_tokens):
        if not beams:
            break
        cands = []
        for toks, score in beams:
            idx = torch.tensor([list(prompt_ids) + toks])
            with torch.no_grad():
                logp = torch.log_softmax(model(idx)[0, -1].double(), dim=-1)      # (V,)
            top = torch.topk(logp, min(beam_width, logp.shape[0]))
            cands += [(score + v, toks + [t]) for v, t in zip(top.values.tolist(), top.indices.tolist())]
        cands.sort(key=lambda c: -c[0])                  # stable: ties keep beam order, then token order
        beams = []
        for score, toks in cands[:beam_width]:
            beams.append((toks, score))
    finished += beams                                    # unfinished at max_new_tokens still compete
    def norm(h):
        return h[1] / len(h[0]) ** length_penalty
    best = max(finished, key=norm)
    toks = best[0][:-1] if best[0] and best[0][-1] == eos_id else best[0]
    return toks, norm(best)
