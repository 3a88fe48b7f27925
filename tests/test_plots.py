"""Tests of course_lib.plots: each helper returns a Figure holding what it was given, saves to PNG, and
leaves no open pyplot figure behind under a non-interactive backend. Cost: ~1 s."""

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
    fig = plots.line(xs, {"cache": [1, 2, 3], "no cache": torch.tensor([2.0, 5.0, 11.0])}, "tokens", "s", "t")
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
