"""Small matplotlib helpers for the notebooks: a probability bar chart, a heatmap, a line plot, and readable
log-axis ticks.

Each returns its `Figure` and never calls `plt.show()`. In Jupyter, make the call the last line of a cell
(or `display(fig)`) and the figure is drawn once; in scripts and tests (non-interactive backends) nothing
pops up and the caller may `fig.savefig(...)`. With those backends the figure is also released from
pyplot's registry, so a loop of plots does not pile up open figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

__all__ = ["bar_probs", "heatmap", "line", "log_ticks"]


def _as_numpy(values) -> np.ndarray:
    if hasattr(values, "detach"):  # a torch tensor, possibly on a GPU or requiring grad
        values = values.detach().float().cpu().numpy()
    return np.asarray(values, dtype=float)


def _new_figure(figsize: tuple[float, float]) -> tuple[Figure, plt.Axes]:
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    # Jupyter's inline backend shows the returned figure itself; keeping it registered in pyplot would
    # draw it a second time at the end of the cell. Non-interactive backends never show it anyway.
    backend = matplotlib.get_backend().lower()
    if "inline" in backend or backend in _NON_INTERACTIVE:
        plt.close(fig)
    return fig, ax


_NON_INTERACTIVE = {"agg", "pdf", "ps", "svg", "cairo", "template", "pgf"}


def bar_probs(tokens: Sequence[str], probs, title: str = "") -> Figure:
    """Horizontal bars of `probs` (one per token string), most likely at the top, values printed."""
    p = _as_numpy(probs).ravel()
    if len(tokens) != len(p):
        raise ValueError(f"{len(tokens)} tokens but {len(p)} probabilities")
    labels = [repr(t) if isinstance(t, str) else str(t) for t in tokens]  # repr shows leading spaces
    fig, ax = _new_figure((6, 0.35 * len(p) + 1.2))
    y = np.arange(len(p))
    ax.barh(y, p, color="tab:blue")
    ax.set_yticks(y, labels)
    ax.invert_yaxis()  # first token on top
    for yi, pi in zip(y, p):
        ax.text(pi, yi, f" {pi:.3f}", va="center", fontsize=8)
    ax.set_xlim(0, max(1.0, float(p.max(initial=0)) * 1.15))
    ax.set_xlabel("probability")
    ax.set_title(title)
    return fig


def heatmap(matrix, xlabels: Sequence[str] | None = None, ylabels: Sequence[str] | None = None,
            title: str = "") -> Figure:
    """A 2-D array as colours (rows top to bottom), with a colour bar; labels are optional."""
    m = _as_numpy(matrix)
    if m.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D matrix, got shape {m.shape}")
    rows, cols = m.shape
    fig, ax = _new_figure((min(2 + 0.4 * cols, 12), min(1.5 + 0.4 * rows, 10)))
    image = ax.imshow(m, cmap="viridis", aspect="auto", interpolation="nearest")
    fig.colorbar(image, ax=ax)
    if xlabels is not None:
        if len(xlabels) != cols:
            raise ValueError(f"{len(xlabels)} x labels for {cols} columns")
        ax.set_xticks(range(cols), list(xlabels), rotation=90)
    if ylabels is not None:
        if len(ylabels) != rows:
            raise ValueError(f"{len(ylabels)} y labels for {rows} rows")
        ax.set_yticks(range(rows), list(ylabels))
    ax.set_title(title)
    return fig


def line(xs, ys: Mapping[str, object], xlabel: str = "", ylabel: str = "", title: str = "") -> Figure:
    """One line per entry of `ys` (label -> values over `xs`), with a legend."""
    x = _as_numpy(xs)
    fig, ax = _new_figure((6, 4))
    for label, values in ys.items():
        y = _as_numpy(values)
        if y.shape != x.shape:
            raise ValueError(f"{label!r} has {y.shape} values for {x.shape} xs")
        ax.plot(x, y, marker="o" if len(x) <= 20 else None, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if ys:
        ax.legend()
    ax.grid(alpha=0.3)
    return fig


def log_ticks(ax: plt.Axes, values, axis: str = "x") -> None:
    """Label a log axis at exactly `values`, as plain numbers, with no minor-tick labels.

    On a log axis spanning less than a decade matplotlib labels the minor ticks ("3×10¹", "4×10¹"), and they
    run into each other; the points actually measured are the ticks a reader wants.
    """
    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    target = ax.xaxis if axis == "x" else ax.yaxis
    ticks = sorted({float(v) for v in _as_numpy(values).ravel()})
    target.set_major_locator(FixedLocator(ticks))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(NullFormatter())
