"""The stored expected values of visible checks equal a fresh computation by code that does not ship (< 1 s)."""

from autograde.visible_data import attention_data, render


def test_stored_attention_outputs_are_up_to_date():
    from course_lib.checks import _attention_data
    assert _attention_data.DATA == attention_data(), "run `python -m autograde.visible_data`"


def test_no_shipped_module_computes_attention_answers():
    import course_lib.checks.generation_loop as gl
    assert not hasattr(gl, "reference_attention")
    assert render(attention_data()).startswith('"""Stored expected outputs')
