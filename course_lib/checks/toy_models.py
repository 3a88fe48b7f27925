"""Toy models that refuse a call breaking an exercise's rule (no autograd, one pass, a bounded
loop): the checks hand them to an answer in place of SmolLM2.

Their logits live only inside the function that refuses: no attribute holds the table and no parent
class has a forward of its own, so an answer cannot step around the refusal (white-box red team 22,
C5: ``super(type(model), model).forward(idx)`` and ``model.table[idx]`` reached the table of a
subclass whose guard sat in ``forward``)."""

from __future__ import annotations

from typing import Callable

import torch


class RefusingTableLM(torch.nn.Module):
    """`model(idx)[b, t] = table[idx[b, t]]` (B, T) -> float32 logits (B, T, V), unless
    ``refuse(idx)`` names a broken rule: then a RuntimeError with that sentence."""

    def __init__(self, table: torch.Tensor, refuse: Callable[[torch.Tensor], str | None]):
        super().__init__()
        # a parameter with no values: where an answer asks the model for its device and dtype
        self.anchor = torch.nn.Parameter(torch.zeros(0), requires_grad=False)
        values = table.detach().float().clone()

        def logits(idx: torch.Tensor) -> torch.Tensor:
            why = refuse(idx)
            if why is not None:
                raise RuntimeError(why)
            return values.to(idx.device)[idx]

        self._logits = logits

    def forward(self, idx: torch.Tensor, **kwargs) -> torch.Tensor:
        return self._logits(idx)


def no_grad_refusal(idx: torch.Tensor) -> str | None:
    """The text's "run the model under torch.no_grad()"."""
    if torch.is_grad_enabled():
        return "the model ran with gradients enabled: run it inside torch.no_grad()"
    return None
