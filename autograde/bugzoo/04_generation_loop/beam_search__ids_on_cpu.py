"""Blind 38 (read only the notebook): Builds each beam's input ids on the CPU (no device=), which fails for a model on a GPU; text: "`model(idx)` with `idx [1, T]`" on the model (the course's convention: ids on `next(model.parameters()).device`).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "beam_search"


def beam_search(model: torch.nn.Module, prompt_ids: list[int], beam_width: int, max_new_tokens: int, eos_id: int,
                length_penalty: float = 1.0) -> tuple[list[int], float]:
    """Width-b beam search; returns (best new tokens without EOS, sum log p / length ** length_penalty)."""
    device = next(model.parameters()).device
    beams = [([], 0.0)]                     # (new tokens, sum log p)
    finished = []
    for _ in range(max_new_tokens):
        cand_tokens, cand_scores = [], []
        for toks, score in beams:
            with torch.no_grad():
                logits = model(torch.tensor([list(prompt_ids) + toks]))[0, -1]
            logp = torch.log_softmax(logits.double(), dim=-1)
            for t in range(logp.shape[0]):
                cand_tokens.append(toks + [t])
                cand_scores.append(score + float(logp[t]))
        order = sorted(range(len(cand_scores)), key=lambda i: -cand_scores[i])[:beam_width]
        beams = []
        for i in order:
            if cand_tokens[i][-1] == eos_id:
                finished.append((cand_tokens[i], cand_scores[i]))
            else:
                beams.append((cand_tokens[i], cand_scores[i]))
        if not beams:
            break
    finished += beams
    def normalised(h):
        return h[1] / (len(h[0]) ** length_penalty)
    best = max(finished, key=normalised)
    toks = best[0][:-1] if best[0] and best[0][-1] == eos_id else best[0]
    return toks, float(normalised(best))
