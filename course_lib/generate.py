"""The generation loop: prompt ids in, new token ids out, one model call per new token.

The loop is separate from the rule that picks each token. A *sampling step* is any callable
`step(logits) -> ids` taking the last position's logits `[B, V]` and returning one token id per row
`[B]` (a LongTensor); it may accept a `generator=` keyword for reproducible randomness. Only two
steps ship here: `greedy` (argmax) and `multinomial` (plain sampling from softmax(logits), i.e.
temperature 1). Temperature, top-k, top-p and the rest are the students' to write, and plug in as
`step=`.

Batches of prompts with different lengths are left-padded: every row's last prompt token then sits
in the same column, so one forward pass yields every row's next-token logits. An attention mask (1 =
real token, 0 = padding) keeps padding invisible and gives the model each token's true position.

Model contract (docs/design.md): `model(idx, cache=cache, attention_mask=mask) -> logits [B, T, V]`,
`model.new_cache(batch_size=B, max_len=N)`, `model.config.eos_token_id`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

import torch

from .device import is_grading

__all__ = ["Step", "generate", "greedy", "multinomial", "stream"]

Step = Callable[..., torch.Tensor]

# Above this many tokens (new tokens x batch rows) a progress bar appears unless asked otherwise.
AUTO_PROGRESS_TOKENS = 256


def greedy(logits: torch.Tensor) -> torch.Tensor:
    """The most likely token of each row: `[B, V]` logits -> `[B]` ids (ties go to the lowest
    id)."""
    return logits.argmax(dim=-1)


def multinomial(logits: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One token per row drawn from softmax(logits) (temperature 1, nothing cut): `[B, V]` -> `[B]`
    ids."""
    probs = torch.softmax(logits.float(), dim=-1)  # (B, V)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)  # (B,)


def _model_device(model: torch.nn.Module) -> torch.device:
    for p in model.parameters():
        return p.device
    return torch.device("cpu")


def _call_step(step: Step, logits: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    ids = step(logits) if generator is None else step(logits, generator=generator)
    if (
        not isinstance(ids, torch.Tensor)
        or ids.shape != logits.shape[:1]
        or ids.is_floating_point()
    ):
        got = (
            f"{type(ids).__name__} of shape {tuple(ids.shape)}, dtype {ids.dtype}"
            if isinstance(ids, torch.Tensor)
            else type(ids).__name__
        )
        raise TypeError(
            "a sampling step must return one integer token id per row, shape "
            f"({logits.shape[0]},); "
            f"got {got}. (torch.multinomial returns shape (B, 1): add .squeeze(-1).)"
        )
    return ids.to(device=logits.device, dtype=torch.long)


def _left_pad(
    prompts: Sequence[Sequence[int]], device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    if len(prompts) == 0:
        raise ValueError("no prompts given")
    if any(len(p) == 0 for p in prompts):
        raise ValueError(
            "every prompt needs at least one token (the model predicts from the last one)"
        )
    width = max(len(p) for p in prompts)
    # (B, L); pad id 0 is never attended to
    idx = torch.zeros(len(prompts), width, dtype=torch.long)
    mask = torch.zeros(len(prompts), width, dtype=torch.long)  # (B, L)
    for row, p in enumerate(prompts):
        idx[row, width - len(p) :] = torch.as_tensor(list(p), dtype=torch.long)
        mask[row, width - len(p) :] = 1
    return idx.to(device), mask.to(device)


def _steps(
    model: torch.nn.Module,
    prompts: Sequence[Sequence[int]],
    max_new_tokens: int,
    step: Step,
    stop_tokens: Iterable[int] | None,
    generator: torch.Generator | None,
    use_cache: bool,
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Yield `(ids [B], keep [B] bool)` per new token: `keep` is False for stop tokens and rows
    already done."""
    if max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    if stop_tokens is None:
        stop_tokens = (model.config.eos_token_id,)
    device = _model_device(model)
    stops = torch.tensor(sorted({int(t) for t in stop_tokens}), dtype=torch.long, device=device)
    idx, prompt_mask = _left_pad(prompts, device)
    batch, width = idx.shape
    padded = bool((prompt_mask == 0).any())
    # The full mask for prompt + every token we may add; a step only passes the columns seen so far.
    mask = torch.ones(batch, width + max_new_tokens, dtype=torch.long, device=device)  # (B, L + N)
    mask[:, :width] = prompt_mask
    active = torch.ones(batch, dtype=torch.bool, device=device)  # (B,)
    cache = model.new_cache(batch_size=batch, max_len=width + max_new_tokens) if use_cache else None
    seq = idx  # (B, L) everything fed so far; only needed without a cache

    with torch.inference_mode():
        model_input = idx
        for t in range(max_new_tokens):
            # Without padding the mask is all ones; passing None lets the model take its plain
            # causal path.
            step_mask = mask[:, : width + t] if padded else None
            if use_cache:
                logits = model(model_input, cache=cache, attention_mask=step_mask)  # (B, T, V)
            else:
                logits = model(seq, attention_mask=step_mask)  # (B, L + t, V)
            ids = _call_step(step, logits[:, -1, :], generator)  # (B,)
            is_stop = torch.isin(ids, stops)  # (B,)
            yield ids, active & ~is_stop
            active &= ~is_stop
            if not bool(active.any()):
                return
            model_input = ids.unsqueeze(1)  # (B, 1)
            if not use_cache:
                seq = torch.cat([seq, model_input], dim=1)  # (B, L + t + 1)


def _progress_bar(total: int, progress: bool | None):
    show = (
        progress if progress is not None else (total >= AUTO_PROGRESS_TOKENS and not is_grading())
    )
    if not show:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="generating", unit="tok", leave=False)


def generate(
    model: torch.nn.Module,
    prompts: Sequence[Sequence[int]],
    max_new_tokens: int,
    step: Step = greedy,
    stop_tokens: Iterable[int] | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
    progress: bool | None = None,
) -> list[list[int]]:
    """Continue each prompt by up to `max_new_tokens` tokens chosen by `step`; return only the new
    tokens.

    `stop_tokens` defaults to the model's end-of-sequence id; a row ends at the first stop token,
    which is
    *not* included in its output (pass `stop_tokens=()` to never stop early). `generator` is handed
    to `step` as `generator=` when given. `progress=None` shows a tqdm bar for long runs (never
    while grading).

    >>> # model, tok = course_lib.load_model()
    >>> # out = generate(model, [tok.encode("The capital of France is")], 8)
    >>> # tok.decode(out[0])  -> ' Paris. ...'
    """
    outputs: list[list[int]] = [[] for _ in prompts]
    bar = _progress_bar(max_new_tokens * len(prompts), progress)
    try:
        for ids, keep in _steps(
            model, prompts, max_new_tokens, step, stop_tokens, generator, use_cache
        ):
            for row, (token, kept) in enumerate(zip(ids.tolist(), keep.tolist())):
                if kept:
                    outputs[row].append(token)
            if bar is not None:
                bar.update(len(prompts))
    finally:
        if bar is not None:
            bar.close()
    return outputs


def stream(
    model: torch.nn.Module,
    prompt_ids: Sequence[int],
    max_new_tokens: int,
    step: Step = greedy,
    stop_tokens: Iterable[int] | None = None,
    generator: torch.Generator | None = None,
    use_cache: bool = True,
) -> Iterator[int]:
    """Yield new token ids for one prompt as soon as each is chosen (same rules as `generate`)."""
    for ids, keep in _steps(
        model, [prompt_ids], max_new_tokens, step, stop_tokens, generator, use_cache
    ):
        if not bool(keep[0]):
            return
        yield int(ids[0])
