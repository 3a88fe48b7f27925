"""Inputs that checks build from code rather than data: toy tokenizers and seeded bigram tables.

A case names them as ``Resource("nb04_...")``; the loaders are registered here, in the visible
package, because the sandboxed process that runs a student's functions on a check's inputs must
rebuild them, and it sees no hidden check module. They are inputs, not answers: nothing here knows
an expected value.
"""

from __future__ import annotations

import functools

import torch

from course_lib.checks.engine import register_resource
from course_lib.checks.generation_loop import TableLM, ToyTokenizer, next_id_lm

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _pair_tokenizer() -> ToyTokenizer:
    """Id i spells two letters, e.g. 0 -> "aa", 27 -> "bb": stops like "ab" straddle two tokens."""
    return ToyTokenizer([LETTERS[(i // 26) % 26] + LETTERS[i % 26] for i in range(256)])


def _random_tables() -> list[TableLM]:
    g = torch.Generator().manual_seed(404)
    out = []
    for _ in range(4):
        logits = torch.randn(6, 6, generator=g, dtype=torch.float64) * 1.5
        logits[int(torch.randint(0, 6, (), generator=g))] *= 0.2  # one near-uniform row
        out.append(TableLM(logits.log_softmax(-1)))
    return out


_TABLES: list[TableLM] = []


def _table(i: int) -> TableLM:
    if not _TABLES:
        _TABLES.extend(_random_tables())
    return _TABLES[i]


def _letter_tokenizer() -> ToyTokenizer:
    """Id i spells one letter, LETTERS[i % 26]."""
    return ToyTokenizer([LETTERS[i % 26] for i in range(256)])


class ByteTokenizer:
    """decode(ids) = the UTF-8 text of the bytes `ids` (as a byte-level BPE decodes): a token may
    hold part of a character, which decodes to U+FFFD on its own."""

    def decode(self, ids) -> str:
        return bytes(int(i) % 256 for i in ids).decode("utf-8", errors="replace")


# every byte distinct, so a bigram model can spell it; the llama is 4 bytes
LLAMA_TEXT = "hi \U0001f999!"


def _llama_lm() -> TableLM:
    """Greedy spells LLAMA_TEXT's bytes after its first byte, then repeats the last one."""
    data = LLAMA_TEXT.encode()
    table = torch.zeros(256, 256)
    for a, b in zip(data, data[1:] + data[-1:]):
        table[a, b] = 10.0
    return TableLM(table)


register_resource("nb04_byte_tokenizer", ByteTokenizer)
register_resource("nb04_llama_lm", _llama_lm)
register_resource("nb04_pair_tokenizer", _pair_tokenizer)
register_resource("nb04_letter_tokenizer", _letter_tokenizer)
for _i in range(4):
    register_resource(f"nb04_table_{_i}", lambda i=_i: _table(i))
# a table where keeping the best b candidates over all beams and refilling b live beams part ways
# (blind class)
register_resource(
    "nb04_table_s11",
    lambda: TableLM(torch.randn(6, 6, generator=torch.Generator().manual_seed(11)) * 2),
)


def coupled_step(logits: torch.Tensor) -> torch.Tensor:
    """A step that reads the whole batch: row r's argmax of logits[r] + logits[-1 - r]. Called on
    each row alone ([1, V]) it gives another answer than on the [B, V] batch the text says it
    receives."""
    return (logits + logits.flip(0)).argmax(dim=-1)


register_resource("nb04_coupled_step", lambda: coupled_step)


def ranked_step(logits: torch.Tensor) -> torch.Tensor:
    """A step that treats each row by its place in the batch: row r takes its (r + 1)-th most likely
    token. A row's choice depends on its own logits and its index only (never on a finished row's
    logits, which differ between correct loops), so a loop that hands the step only the running rows
    ([B_running, V]) renumbers them and changes what they get."""
    B = logits.shape[0]
    # (B, B): each row's B most likely ids, best first
    ranked = torch.topk(logits, B, dim=-1).indices
    return ranked[torch.arange(B, device=logits.device), torch.arange(B, device=logits.device)]


register_resource("nb04_ranked_step", lambda: ranked_step)


# ---------------------------------------------------------------------------- a model on a second
# device
@functools.lru_cache(maxsize=None)
def _second_device() -> torch.device:
    """torch's `lazy` device (TorchScript backend, run on this CPU): a device other than the CPU
    whose tensors hold data, as a GPU's do. `meta` tensors hold none, so a model there cannot say
    which tokens come next."""
    import torch._lazy.ts_backend

    torch._lazy.ts_backend.init()  # once per process: a second call raises
    return torch.zeros(1, device="lazy").device


class OnSecondDevice:
    """A toy model whose weights live on a second device (ids built on the CPU for a model on a GPU
    fail there only: bug zoo `*__ids_on_cpu`; issue 38).
    ``next(model.parameters()).device`` names that device; a call with ids or a mask on any
    other device raises as CUDA does; the logits come back on the model's device.

    Not an ``nn.Module``, on purpose: selfcheck's memoised models key their memo on the ids' values,
    not their device, and would hand a CPU call the answer of an earlier call on the right
    device."""

    def __init__(self, model: torch.nn.Module, logits_on_cpu: bool = False):
        self._model, self._logits_on_cpu = model, logits_on_cpu
        self._weight = torch.zeros(1, device=_second_device())

    @property
    def device(self) -> torch.device:
        return self._weight.device

    def parameters(self, recurse: bool = True):
        yield self._weight

    def eval(self) -> "OnSecondDevice":
        return self

    def train(self, mode: bool = True) -> "OnSecondDevice":
        return self

    def __call__(self, idx: torch.Tensor, *args, **kwargs) -> torch.Tensor:
        for name, t in [("ids", idx), *enumerate(args), *kwargs.items()]:
            if isinstance(t, torch.Tensor) and t.device != self.device:
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but found at least two "
                    "devices, "
                    f"{self.device} and {t.device}! (the model's weights are on {self.device}, its "
                    f"{name} on {t.device}: with the model on a GPU this call fails the same way)"
                )
        moved = [a.cpu() if isinstance(a, torch.Tensor) else a for a in args]
        out = self._model(
            idx.cpu(),
            *moved,
            **{k: v.cpu() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()},
        )
        # logits_on_cpu: torch's lazy device cannot list the result of topk or sort over a row taken
        # by iterating a tensor (`for row in logp: torch.topk(row, b).indices.tolist()` raises
        # there, never on a GPU); a beam search does exactly that, so its case checks the ids'
        # device and hands the logits back on the CPU.
        return out if self._logits_on_cpu else out.to(self.device)

    forward = __call__


def _pow2_second_device() -> OnSecondDevice:
    from course_lib.checks.pipeline_trace import toy_pow2_lm

    return OnSecondDevice(toy_pow2_lm())


def _next_id_second_device() -> OnSecondDevice:
    from course_lib.checks.logits_softmax import next_id_lm

    return OnSecondDevice(next_id_lm())


register_resource("nb01_pow2_lm_second_device", _pow2_second_device)
register_resource("nb02_next_id_lm_second_device", _next_id_second_device)
# the texts of 04 Ex 1 and Ex 4: ids (and the mask) on the model's device
register_resource("nb04_next_id_lm_second_device", lambda: OnSecondDevice(next_id_lm()))
register_resource(
    "nb04_table_1_second_device", lambda: OnSecondDevice(_table(1), logits_on_cpu=True)
)
