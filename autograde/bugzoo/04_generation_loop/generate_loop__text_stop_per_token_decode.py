"""Origin: blind class 9.

Searches text stops in the tokens decoded one by one and joined: a stop whose bytes span tokens (an emoji under
a byte-level tokenizer) decodes to U+FFFD pieces and is never found (blind class 9). The text: decode all the
new tokens of the row and search the text.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `generate_loop__class9_per_token_decode.py`."""
import torch

TARGET = "generate_loop"


def generate_loop(model: torch.nn.Module, prompts: list[list[int]], max_new_tokens: int, step=greedy,
                  eos_id: int | None = None, stop_sequences: tuple | list = (), tokenizer=None,
                  generator: torch.Generator | None = None) -> list[dict]:
    """Generate up to max_new_tokens per prompt; stop rows on EOS or a stop sequence; one dict per prompt."""
    B, width = len(prompts), max(len(p) for p in prompts)
    device = next(iter(model.parameters())).device
    idx = torch.zeros(B, width, dtype=torch.long)                       # (B, L) left-padded
    mask = torch.zeros(B, width, dtype=torch.long)                      # (B, L) 1 = real token
    for r, p in enumerate(prompts):
        idx[r, width - len(p):] = torch.tensor(p, dtype=torch.long)
        mask[r, width - len(p):] = 1
    idx, mask = idx.to(device), mask.to(device)
    new = [[] for _ in range(B)]
    reason = ["length"] * B
    done = [False] * B
    token_stops = [list(s) for s in stop_sequences if not isinstance(s, str)]
    text_stops = [s for s in stop_sequences if isinstance(s, str)]
    for _ in range(max_new_tokens):
        if all(done):
            break
        with torch.no_grad():
            logits = model(idx, attention_mask=mask)[:, -1, :]          # (B, V) next-token logits
        ids = step(logits) if generator is None else step(logits, generator=generator)   # (B,)
        for r, t in enumerate(ids.tolist()):
            if done[r]:
                continue
            if eos_id is not None and t == eos_id:
                done[r], reason[r] = True, "eos"
                continue
            new[r].append(t)
            hit = any(len(s) > 0 and new[r][-len(s):] == s for s in token_stops)
            if text_stops and not hit:
                text = "".join(tokenizer.decode([x]) for x in new[r])   # each token alone
                hit = any(s in text for s in text_stops)
            if hit:
                done[r], reason[r] = True, "stop"
        idx = torch.cat([idx, ids.to(device).view(B, 1)], dim=1)        # (B, L + 1)
        mask = torch.cat([mask, torch.ones(B, 1, dtype=torch.long, device=device)], dim=1)
    return [{"tokens": new[r], "finish_reason": reason[r]} for r in range(B)]
