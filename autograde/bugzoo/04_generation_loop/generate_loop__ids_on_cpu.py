"""Blind 38 (read only the notebook): Builds the padded ids and mask on the CPU (no device=), so a model on a GPU gets CPU inputs; text: "`model(idx, attention_mask=mask)`" with the model wherever it lives (course_lib.generate moves ids to the model's device).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "generate_loop"


def generate_loop(model: torch.nn.Module, prompts: list[list[int]], max_new_tokens: int, step=None,
                  eos_id: int | None = None, stop_sequences: tuple | list = (), tokenizer=None,
                  generator: torch.Generator | None = None) -> list[dict]:
    """Generate up to max_new_tokens per prompt; stop rows on EOS or a stop sequence; one dict per prompt."""
    if step is None:
        from course_lib.generate import greedy as step
    device = next(model.parameters()).device
    width = max(len(p) for p in prompts)
    idx = torch.zeros(len(prompts), width, dtype=torch.long)
    mask = torch.zeros(len(prompts), width, dtype=torch.long)
    for r, p in enumerate(prompts):
        idx[r, width - len(p):] = torch.tensor(p, dtype=torch.long)
        mask[r, width - len(p):] = 1
    new = [[] for _ in prompts]
    reason = [None] * len(prompts)
    for t in range(max_new_tokens):
        with torch.no_grad():
            logits = model(idx, attention_mask=mask)[:, -1, :]                 # (B, V)
        ids = step(logits, generator=generator) if generator is not None else step(logits)
        for r in range(len(prompts)):
            if reason[r] is not None:
                continue
            tok = int(ids[r])
            if eos_id is not None and tok == eos_id:
                reason[r] = "eos"
                continue
            new[r].append(tok)
            if _stopped(new[r], stop_sequences, tokenizer):
                reason[r] = "stop"
        if all(x is not None for x in reason):
            break
        col = ids.view(-1, 1).to(idx.device)
        idx = torch.cat([idx, col], dim=1)
        mask = torch.cat([mask, torch.ones_like(col)], dim=1)
    return [{"tokens": toks, "finish_reason": why or "length"} for toks, why in zip(new, reason)]


def _stopped(toks, stop_sequences, tokenizer):
    for s in stop_sequences:
        if isinstance(s, str):
            if s in tokenizer.decode(toks):
                return True
        elif len(s) and toks[-len(s):] == list(s):
            return True
    return False
