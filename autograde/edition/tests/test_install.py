"""The installation: the course's package imports, the model file is there and intact, the
tokenizers work.

Expected values come from outside the code under test: the notes' published cl100k_base ids,
SmolLM2's published architecture (its model card's config) and special tokens. A few seconds.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil

import pytest

import course_lib

NOTES_TEXT = "Hello, how are you today?"
NOTES_IDS = [9906, 11, 1268, 527, 499, 3432, 30]  # printed in the notes next to this sentence


def test_every_module_of_the_course_imports():
    names = ["course_lib"] + [
        f"course_lib.{m.name}" for m in pkgutil.iter_modules(course_lib.__path__)
    ]
    checks = importlib.import_module("course_lib.checks")
    names += [f"course_lib.checks.{m.name}" for m in pkgutil.iter_modules(checks.__path__)]
    for name in names:
        importlib.import_module(name)
    assert len(names) >= 10, names


def test_this_is_the_student_edition_without_a_grader():
    # What students receive carries no grading harness (its hidden checks and answers stay with the
    # instructor).
    assert importlib.util.find_spec("autograde") is None


def test_cl100k_base_gives_the_notes_ids_offline():
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base")
    assert enc.encode(NOTES_TEXT) == NOTES_IDS
    assert enc.decode(NOTES_IDS) == NOTES_TEXT


@pytest.fixture(scope="module")
def checkpoint():
    from course_lib.weights import fetch, read_gguf

    return read_gguf(fetch(progress=False), weights=False)


def test_the_model_file_is_smollm2_135m(checkpoint):
    c = checkpoint.config
    # SmolLM2-135M: 30 layers, width 576, 9 query heads sharing 3 key/value heads, MLP 1536,
    # vocabulary 49152.
    assert (c.n_layer, c.d_model, c.n_head, c.n_kv_head, c.d_ff, c.vocab_size) == (
        30,
        576,
        9,
        3,
        1536,
        49152,
    )


def test_the_models_tokenizer_round_trips_and_knows_its_chat_tokens(checkpoint):
    tok = course_lib.build_model_tokenizer(
        checkpoint.tokens, checkpoint.token_types, checkpoint.merges
    )
    for text in (NOTES_TEXT, "", "naïve café 😀", "  two  spaces\nand a line"):
        assert tok.decode(tok.encode(text)) == text
    assert tok.encode(NOTES_TEXT) != NOTES_IDS  # another vocabulary, other ids
    assert tok.encode("<|im_start|><|im_end|>", allowed_special="all") == [1, 2]
