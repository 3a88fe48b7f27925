"""Written by a blind honest student (class 7, h04_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "beam_search"


import heapq
def beam_search(model: torch.nn.Module, prompt_ids: list[int], beam_width: int, max_new_tokens: int, eos_id: int,
                length_penalty: float = 1.0) -> tuple[list[int], float]:
    """Width-b beam search; returns (best new tokens without EOS, sum log p / length ** length_penalty)."""
    device = next(model.parameters()).device
    beams, finished = [(0.0, [])], []
    step_no = 0
    while beams and step_no < max_new_tokens:
        step_no += 1
        candidates = []
        for score, toks in beams:
            with torch.no_grad():
                logits = model(torch.tensor([list(prompt_ids) + toks], device=device))[0, -1]
            logp = torch.log_softmax(logits.to(torch.float64), dim=-1).tolist()
            candidates.extend((score + lp, toks + [t]) for t, lp in enumerate(logp))
        best = heapq.nlargest(beam_width, candidates, key=lambda c: c[0])
        beams = [c for c in best if c[1][-1] != eos_id]
        finished.extend(c for c in best if c[1][-1] == eos_id)
    finished.extend(beams)
    score, toks = max(finished, key=lambda c: c[0] / len(c[1]) ** length_penalty)
    norm = score / len(toks) ** length_penalty
    if toks[-1] == eos_id:
        toks = toks[:-1]
    return toks, float(norm)
