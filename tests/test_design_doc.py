"""docs/design.md states the course_lib API a contributor builds against: its snippet runs as
written (issue 36: it imported a `get_tokenizer` that does not exist). Needs the model file (as
every model test here)."""

from __future__ import annotations

import re
from pathlib import Path

DESIGN = Path(__file__).resolve().parents[1] / "docs" / "design.md"


def test_the_design_pages_api_snippet_runs():
    text = DESIGN.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/design.md has no python block"
    namespace: dict = {}
    exec(compile(blocks[0], str(DESIGN), "exec"), namespace)  # noqa: S102 - our own documentation
    logits, cache = namespace["logits"], namespace["cache"]
    assert (
        logits.shape[:2] == namespace["idx"].shape
        and logits.shape[-1] == namespace["cfg"].vocab_size
    )
    assert namespace["trace"].attn[3].shape[-1] == namespace["idx"].shape[1]
    assert cache is not None and namespace["text"] == "The capital of France is"
