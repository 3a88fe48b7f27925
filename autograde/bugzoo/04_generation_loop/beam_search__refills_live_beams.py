"""Origin: blind class 6 (bs_refill).

HF-style: keeps refilling b live beams from the next candidates when some finish (the text: keep the best b candidates over all beams; a kept candidate ending in EOS is finished).

From a blind class (class 6); it kept its points until the hidden case named after it. Runs in the notebook's namespace.

Formerly `beam_search__class6_bs_refill.py`."""
import math
import torch

TARGET = "beam_search"

def beam_search(model: torch.nn.Module, prompt_ids: list[int], beam_width: int, max_new_tokens: int, eos_id: int,
                length_penalty: float = 1.0) -> tuple[list[int], float]:
    """Width-b beam search; returns (best new tokens without EOS, sum log p / length ** length_penalty)."""
    try:
        dev = next(model.parameters()).device
    except (StopIteration, AttributeError):
        dev = torch.device("cpu")
    beams = [([], 0.0)]
    finished = []
    for _ in range(max_new_tokens):
        cands = []
        for toks, score in beams:
            idx = torch.tensor([list(prompt_ids) + toks], device=dev)
            with torch.no_grad():
                logp = torch.log_softmax(model(idx)[0, -1].double(), dim=-1).tolist()
            for t, lp in enumerate(logp):
                cands.append((toks + [t], score + lp))
        cands.sort(key=lambda c: c[1], reverse=True)
        beams = []
        for toks, score in cands[:2 * beam_width]:
            if toks[-1] == eos_id:
                finished.append((toks, score))
            elif len(beams) < beam_width:
                beams.append((toks, score))
            if len(beams) == beam_width:
                break
        if not beams:
            break
    finished += beams
    def norm(h):
        return h[1] / (max(len(h[0]), 1) ** length_penalty)
    best = max(finished, key=norm)
    toks = best[0][:-1] if best[0] and best[0][-1] == eos_id else best[0]
    return [int(t) for t in toks], float(norm(best))
