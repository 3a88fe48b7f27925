"""Tests of course_lib.plots: each helper returns a Figure holding what it was given, saves to PNG,
and leaves no open pyplot figure behind under a non-interactive backend. Cost: ~1 s."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

from course_lib import plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _saves_png(fig: Figure, path) -> None:
    fig.savefig(path)
    assert path.read_bytes()[:8] == PNG_MAGIC


def test_backend_is_non_interactive():
    assert matplotlib.get_backend().lower() == "agg"  # set by conftest; the tests below rely on it


def test_bar_probs(tmp_path):
    probs = torch.tensor([0.5, 0.3, 0.2])
    fig = plots.bar_probs([" Paris", " the", " a"], probs, title="next token")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert [p.get_width() for p in ax.patches] == pytest.approx([0.5, 0.3, 0.2])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["' Paris'", "' the'", "' a'"]
    assert ax.get_title() == "next token"
    _saves_png(fig, tmp_path / "bars.png")
    with pytest.raises(ValueError, match="2 tokens but 3"):
        plots.bar_probs(["a", "b"], probs)


def test_heatmap(tmp_path):
    m = np.arange(6, dtype=float).reshape(2, 3)
    fig = plots.heatmap(m, ["a", "b", "c"], ["x", "y"], title="attention")
    image = fig.axes[0].get_images()[0]
    assert np.array_equal(image.get_array(), m)
    assert len(fig.axes) == 2  # the heatmap and its colour bar
    _saves_png(fig, tmp_path / "heat.png")
    with pytest.raises(ValueError, match="2-D"):
        plots.heatmap(np.zeros(3))
    with pytest.raises(ValueError, match="x labels"):
        plots.heatmap(m, ["a"], None)


def test_line(tmp_path):
    xs = [64, 128, 256]
    fig = plots.line(
        xs, {"cache": [1, 2, 3], "no cache": torch.tensor([2.0, 5.0, 11.0])}, "tokens", "s", "t"
    )
    lines = fig.axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == ["cache", "no cache"]
    assert list(lines[1].get_ydata()) == [2.0, 5.0, 11.0]
    _saves_png(fig, tmp_path / "line.png")
    with pytest.raises(ValueError, match="values for"):
        plots.line(xs, {"short": [1, 2]})


def test_no_open_figures_pile_up():
    before = len(plt.get_fignums())
    for _ in range(30):
        plots.line([0, 1], {"a": [0, 1]})
    assert len(plt.get_fignums()) == before


def test_log_ticks_labels_exactly_the_values_and_no_minor_ticks():
    fig, ax = plt.subplots()
    ax.loglog([32, 40, 48], [1.0, 2.0, 3.0])
    plots.log_ticks(ax, [32, 40, 48])
    fig.canvas.draw()
    major = [t.get_text() for t in ax.get_xticklabels()]
    minor = [t.get_text() for t in ax.get_xticklabels(minor=True) if t.get_text()]
    plt.close(fig)
    assert major == ["32", "40", "48"] and minor == []
    with pytest.raises(ValueError, match="axis"):
        plots.log_ticks(ax, [1], axis="z")


# --- the mechanism pictures: each test checks the figure's data against numbers worked out by hand
# ---------------


def _gid(ax, gid):
    return [p for p in ax.patches if p.get_gid() == gid]


def test_inverse_cdf_lays_the_probabilities_end_to_end(tmp_path):
    probs = torch.tensor([0.5, 0.25, 0.15, 0.07, 0.03])
    fig = plots.inverse_cdf(probs, us=[0.15, 0.62], labels=[" the", " a", " my", " one", " his"])
    ax_seg, ax_cdf = fig.axes
    seg = _gid(ax_seg, "segment")
    # by hand: the segments start at 0, 0.5, 0.75, 0.9, 0.97 and tile [0, 1) without gaps
    assert [p.get_y() for p in seg] == pytest.approx([0.0, 0.5, 0.75, 0.9, 0.97])
    assert [p.get_height() for p in seg] == pytest.approx([0.5, 0.25, 0.15, 0.07, 0.03])
    # the staircase: token i's own segment ends at c_i = 0.5, 0.75, 0.9, 0.97, 1.0
    assert [p.get_y() + p.get_height() for p in _gid(ax_cdf, "cdf")] == pytest.approx(
        [0.5, 0.75, 0.9, 0.97, 1.0]
    )
    us = sorted(
        {
            ln.get_ydata()[0]
            for ax in (ax_seg, ax_cdf)
            for ln in ax.get_lines()
            if ln.get_gid() == "u"
        }
    )
    assert us == pytest.approx([0.15, 0.62])
    # u = 0.62 lies in exactly one segment, token 1's [0.5, 0.75): what the picture says the draw
    # returns
    assert [i for i, p in enumerate(seg) if p.get_y() <= 0.62 < p.get_y() + p.get_height()] == [1]
    assert [t.get_text() for t in ax_cdf.get_xticklabels()] == [
        "' the'",
        "' a'",
        "' my'",
        "' one'",
        "' his'",
    ]
    _saves_png(fig, tmp_path / "icdf.png")
    with pytest.raises(ValueError, match="labels"):
        plots.inverse_cdf(probs, labels=["a"])
    with pytest.raises(ValueError, match="non-negative"):
        plots.inverse_cdf([0.5, -0.1])


def test_truncation_sorts_and_accumulates_the_mass(tmp_path):
    probs = torch.tensor([0.1, 0.4, 0.2, 0.3])
    kept = {
        "top-k, k=2": torch.tensor([False, True, False, True]),
        "min-p, min_p=0.6": torch.tensor([False, True, False, True]),
    }
    fig = plots.truncation(probs, kept, labels=["a", "b", "c", "d"], p=0.8, min_p=0.6)
    top, mass = fig.axes[0], fig.axes[-1]  # the twin axis of the first panel is added last
    # sorted by hand: b 0.4, d 0.3, c 0.2, a 0.1; cumulative mass 0.4, 0.7, 0.9, 1.0
    assert [p.get_height() for p in top.patches] == pytest.approx([0.4, 0.3, 0.2, 0.1])
    (cum,) = [ln for ln in mass.get_lines() if ln.get_gid() == "cumulative"]
    assert list(cum.get_ydata()) == pytest.approx([0.4, 0.7, 0.9, 1.0])
    assert [t.get_text() for t in fig.axes[2].get_xticklabels()] == ["'b'", "'d'", "'c'", "'a'"]
    for ax in fig.axes[1:3]:
        assert [p.get_height() for p in _gid(ax, "kept")] == pytest.approx([0.4, 0.3])
        assert [p.get_height() for p in _gid(ax, "removed")] == pytest.approx([0.2, 0.1])
        assert ax.get_title().endswith("keeps 2 tokens")
    # min-p's threshold line at min_p * p_max = 0.6 * 0.4 = 0.24, on the min-p panel only
    assert [ln.get_ydata()[0] for ln in fig.axes[2].get_lines()] == pytest.approx([0.24])
    assert fig.axes[1].get_lines() == []
    _saves_png(fig, tmp_path / "trunc.png")
    by_function = plots.truncation(probs, kept, labels=lambda i: "abcd"[i], n_show=2)
    assert [t.get_text() for t in by_function.axes[2].get_xticklabels()] == ["'b'", "'d'"]
    with pytest.raises(ValueError, match="mask of 3"):
        plots.truncation(probs, {"x": torch.tensor([True, False, True])})


def test_transformer_block_shows_smollm2_published_shapes(tmp_path):
    from course_lib.model import ModelConfig

    fig = plots.transformer_block(ModelConfig())
    text = "\n".join(t.get_text() for t in fig.axes[0].texts)
    # SmolLM2-135M's published config: hidden 576, 9 heads, 3 key/value heads, head 64, MLP 1536, 30
    # layers, vocabulary 49152
    for label in [
        "q_proj: 576 -> 576 (9 heads × 64)",
        "k_proj: 576 -> 192 (3 heads × 64)",
        "v_proj: 576 -> 192",
        "[B, 9, T, T]",
        "shared by 3 query heads",
        "gate_proj, up_proj: 576 -> 1536",
        "down_proj: 1536 -> 576",
        "decoder block × 30",
        "embed_tokens: a table 49152 × 576",
        "576 -> 49152",
        "logits [B, T, 49152]",
        "RMSNorm",
        "RoPE",
    ]:
        assert label in text, label
    _saves_png(fig, tmp_path / "block.png")
    gpt2 = "\n".join(
        t.get_text() for t in plots.transformer_block(ModelConfig.gpt2_small()).axes[0].texts
    )
    # GPT-2 small: 768 wide, 12 heads of 64 each with its own keys and values, MLP 3072, 12 layers,
    # 50257 tokens
    for label in [
        "k_proj: 768 -> 768 (12 heads × 64)",
        "one k/v head per query head",
        "up_proj: 768 -> 3072; gelu",
        "decoder block × 12",
        "768 -> 50257",
        "LayerNorm",
        "learned position table",
    ]:
        assert label in gpt2, label
    assert "RoPE" not in gpt2 and "RMSNorm" not in gpt2


def test_kv_cache_growth_draws_the_measured_positions_and_bytes(tmp_path):
    lengths = [9, 10, 11, 12]
    # k and v, 30 layers, 3 kv heads of 64, float32: 46,080 bytes
    per_position = 2 * 30 * 3 * 64 * 4
    fig = plots.kv_cache_growth(lengths, [n * per_position for n in lengths], prompt_len=9)
    ax, ax_b = fig.axes
    assert [p.get_width() for p in _gid(ax, "prompt")] == [9, 9, 9, 9]
    assert [p.get_width() for p in _gid(ax, "generated")] == [0, 1, 2, 3]
    (line,) = [ln for ln in ax_b.get_lines() if ln.get_gid() == "bytes"]
    assert list(line.get_xdata()) == lengths
    assert list(line.get_ydata()) == pytest.approx([n * 46_080 / 2**20 for n in lengths])
    assert "46,080 bytes each" in ax_b.get_title()
    _saves_png(fig, tmp_path / "kv.png")
    with pytest.raises(ValueError, match="equal"):
        plots.kv_cache_growth([1, 2], [1], prompt_len=1)


def test_knob_static_strip_draws_each_setting_and_degrades_without_widgets(monkeypatch, capsys):
    import sys

    seen = []

    def draw(ax, T=1.0, k=5):
        seen.append((T, k))
        ax.bar([0, 1], [T, k])

    static = [{"T": 0.5, "k": 1}, {"T": 2.0, "k": 3}]
    fig = plots.knob(
        draw, {"T": (0.0, 3.0, 0.05, 1.0), "k": (1, 50, 1, 5)}, static, interactive=False, title="t"
    )
    assert seen == [(0.5, 1), (2.0, 3)] and len(fig.axes) == 2
    assert [p.get_height() for p in fig.axes[1].patches] == [2.0, 3]
    assert "static" in fig._suptitle.get_text()
    # ipywidgets not installed: import fails
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    seen.clear()
    fig = plots.knob(draw, {"T": (0.0, 3.0, 0.05, 1.0)}, static, interactive=True, title="t")
    assert seen == [(0.5, 1), (2.0, 3)] and "static" in fig._suptitle.get_text()


def test_knob_builds_sliders_with_the_given_ranges_when_widgets_run(capsys):
    pytest.importorskip("ipywidgets")
    fig = plots.knob(
        lambda ax, T=1.0, k=5: None,
        {"T": (0.0, 3.0, 0.05, 1.0), "k": (1, 50, 1, 5)},
        [{"T": 1.0, "k": 5}],
        interactive=True,
        title="t",
    )
    # outside a kernel, display() prints the widget's repr
    shown = capsys.readouterr().out
    assert "FloatSlider(value=1.0" in shown and "max=3.0" in shown and "IntSlider(value=5" in shown
    assert "max=50" in shown and "static" not in fig._suptitle.get_text()
