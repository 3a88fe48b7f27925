"""Small matplotlib helpers for the notebooks: a probability bar chart, a heatmap, a line plot,
readable log-axis ticks, and pictures of the mechanisms: sampling by inverse CDF, truncation rules
with the cumulative mass, a transformer block with a model's shapes, the KV cache growing; and
`knob`, a slider that degrades to a static strip of pictures where widgets cannot run.

The mechanism pictures only draw what they are given: the caller computes which tokens a rule keeps
or which token a draw picks (with the student's own functions), so nothing here answers an exercise.

Each returns its `Figure` and never calls `plt.show()`. In Jupyter, make the call the last line of a
cell (or `display(fig)`) and the figure is drawn once; in scripts and tests (non-interactive
backends) nothing pops up and the caller may `fig.savefig(...)`. With those backends the figure is
also released from pyplot's registry, so a loop of plots does not pile up open figures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

__all__ = [
    "bar_probs",
    "heatmap",
    "inverse_cdf",
    "knob",
    "kv_cache_growth",
    "line",
    "log_ticks",
    "transformer_block",
    "truncation",
]


def _as_numpy(values) -> np.ndarray:
    if hasattr(values, "detach"):  # a torch tensor, possibly on a GPU or requiring grad
        values = values.detach().float().cpu().numpy()
    return np.asarray(values, dtype=float)


def _new_figure(figsize: tuple[float, float], nrows: int = 1, ncols: int = 1, **kwargs):
    """plt.subplots(nrows, ncols), constrained layout; the figure is released from pyplot where it
    would be shown twice."""
    fig, ax = plt.subplots(nrows, ncols, figsize=figsize, layout="constrained", **kwargs)
    # Jupyter's inline backend shows the returned figure itself; keeping it registered in pyplot
    # would draw it a second time at the end of the cell. Non-interactive backends never show it
    # anyway.
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
    # repr shows leading spaces
    labels = [repr(t) if isinstance(t, str) else str(t) for t in tokens]
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


def heatmap(
    matrix,
    xlabels: Sequence[str] | None = None,
    ylabels: Sequence[str] | None = None,
    title: str = "",
) -> Figure:
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


def line(
    xs, ys: Mapping[str, object], xlabel: str = "", ylabel: str = "", title: str = ""
) -> Figure:
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

    On a log axis spanning less than a decade matplotlib labels the minor ticks ("3×10¹", "4×10¹"),
    and they run into each other; the points actually measured are the ticks a reader wants.
    """
    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    target = ax.xaxis if axis == "x" else ax.yaxis
    ticks = sorted({float(v) for v in _as_numpy(values).ravel()})
    target.set_major_locator(FixedLocator(ticks))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(NullFormatter())


def _gid_patches(ax: plt.Axes, gid: str) -> list:
    return [p for p in ax.patches if p.get_gid() == gid]


def inverse_cdf(
    probs, us: Sequence[float] = (), labels: Sequence[str] | None = None, title: str = ""
) -> Figure:
    """Sampling by inverse CDF, drawn: the probabilities laid end to end on [0, 1), and the
    cumulative sums.

    Left: one column cut into segments of length p_i (token i's segment is [c_{i-1}, c_i)). Right:
    c_i per token as a staircase of bars, token i's own segment dark. Each u in `us` is a dashed
    line at height u across both: the token it lands on is the segment it crosses on the left, the
    first bar taller than u on the right. Artists carry gids: "segment" (left), "cdf" (right), "u"
    (the lines).
    """
    p = _as_numpy(probs).ravel()
    if p.size == 0 or (p < 0).any():
        raise ValueError("probs must be a non-empty vector of non-negative numbers")
    names = (
        [repr(t) if isinstance(t, str) else str(t) for t in labels]
        if labels is not None
        else [str(i) for i in range(len(p))]
    )
    if len(names) != len(p):
        raise ValueError(f"{len(names)} labels for {len(p)} probabilities")
    cum = np.cumsum(p)
    before = cum - p
    colors = [plt.get_cmap("tab10")(i % 10) for i in range(len(p))]
    fig, (ax_seg, ax_cdf) = _new_figure(
        (8, 3.4), 1, 2, gridspec_kw={"width_ratios": [1, 3]}, sharey=True
    )
    for i in range(len(p)):
        ax_seg.bar(
            0, p[i], bottom=before[i], color=colors[i], edgecolor="white", width=0.6, gid="segment"
        )
        if p[i] >= 0.04:
            ax_seg.text(
                0,
                before[i] + p[i] / 2,
                f"{names[i]}: {p[i]:.2f}",
                ha="center",
                va="center",
                fontsize=7,
            )
        # the mass before i
        ax_cdf.bar(i, before[i], color=colors[i], alpha=0.25, width=0.7)
        # i's own segment
        ax_cdf.bar(i, p[i], bottom=before[i], color=colors[i], width=0.7, gid="cdf")
    for u in us:
        for ax in (ax_seg, ax_cdf):
            ax.axhline(float(u), color="black", ls="--", lw=1, gid="u")
        ax_cdf.text(
            len(p) - 0.4, float(u), f" u = {float(u):.2f}", va="bottom", ha="right", fontsize=8
        )
    ax_seg.set_xticks([])
    ax_seg.set_xlim(-0.5, 0.5)
    ax_seg.set_ylim(0, max(1.0, float(cum[-1])) * 1.02)
    ax_seg.set_ylabel("u ~ uniform on [0, 1)")
    ax_seg.set_title("end to end", fontsize=9)
    ax_cdf.set_xticks(range(len(p)), names, rotation=90 if len(p) > 8 else 0, fontsize=8)
    ax_cdf.set_title(
        title or "cumulative sums c_i: a draw u picks the first token with c_i > u", fontsize=9
    )
    return fig


def truncation(
    probs,
    kept: Mapping[str, object],
    labels: Sequence[str] | Callable[[int], str] | None = None,
    n_show: int = 30,
    p: float | None = None,
    min_p: float | None = None,
    title: str = "",
    log: bool = True,
) -> Figure:
    """One distribution, sorted, with its cumulative mass, then which tokens each rule keeps.

    `probs` is one distribution [V]; `kept` maps a rule's name to a bool mask [V] (True = kept),
    computed by the caller; `labels` names token ids (a list, or a function such as `lambda i:
    tok.decode([i])`). The top panel shows the `n_show` most likely tokens and the cumulative mass
    (right axis, with a line at `p` if given); one panel per rule colours the kept tokens orange and
    counts every kept token of the whole vocabulary; `min_p` draws the threshold min_p * p_max on
    the min-p panels (names with "min-p"). `log` draws the bars on a log scale, so that the tail a
    rule removes stays visible next to the top token. Artists carry gids: "cumulative" (the mass
    line), "kept" and "removed" (the rule panels' bars).
    """
    pr = _as_numpy(probs).ravel()
    order = np.argsort(-pr, kind="stable")[:n_show]
    top = pr[order]
    label = (labels if callable(labels) else labels.__getitem__) if labels is not None else str
    names = [repr(label(int(i))) if labels is not None else str(i) for i in order]
    fig, axes = _new_figure((10, 1.9 * (1 + len(kept)) + 1.2), 1 + len(kept), 1, sharex=True)
    axes = np.atleast_1d(axes)
    x = np.arange(len(order))
    ax0 = axes[0]
    ax0.bar(x, top, color="tab:blue")
    ax0.set_ylabel("p" + (" (log)" if log else ""), fontsize=8)
    mass = ax0.twinx()
    mass.plot(x, np.cumsum(top), "o-", ms=3, color="tab:red", gid="cumulative")
    mass.set_ylim(0, 1.05)
    mass.set_ylabel("cumulative mass", color="tab:red", fontsize=8)
    if p is not None:
        mass.axhline(p, color="tab:red", ls=":", lw=1)
        mass.text(x[-1], p, f"p = {p:g}", color="tab:red", ha="right", va="bottom", fontsize=8)
    ax0.set_title(
        title or f"the {len(order)} most likely tokens, sorted, and their cumulative mass",
        fontsize=9,
    )
    for ax, (name, mask) in zip(axes[1:], kept.items()):
        m = _as_numpy(mask).ravel().astype(bool)
        if m.shape != pr.shape:
            raise ValueError(
                f"{name!r}: a mask of {m.shape[0]} entries for {pr.shape[0]} probabilities"
            )
        shown = m[order]
        ax.bar(x[shown], top[shown], color="tab:orange", gid="kept")
        ax.bar(x[~shown], top[~shown], color="tab:gray", gid="removed")
        if min_p is not None and "min-p" in name:
            ax.axhline(min_p * pr.max(), color="black", ls=":", lw=1)
            ax.text(
                x[-1],
                min_p * pr.max(),
                f"min_p x p_max = {min_p * pr.max():.3f}",
                ha="right",
                va="bottom",
                fontsize=8,
            )
        ax.set_title(f"{name}: keeps {int(m.sum())} tokens", fontsize=9)
        ax.set_ylabel("p" + (" (log)" if log else ""), fontsize=8)
    if log:
        for ax in axes:
            ax.set_yscale("log")
            ax.set_ylim(top[top > 0].min() / 2 if (top > 0).any() else 1e-6, 1.5)
    axes[-1].set_xticks(x, names, rotation=90, fontsize=7)
    return fig


def _block_rows(c, batch: str, seq: str) -> list[tuple[str, str, str]]:
    """(key, text, colour) of each box of ``transformer_block``, top to bottom, for config C."""
    d, hd, V = c.d_model, c.d_model // c.n_head, c.vocab_size
    norm = "RMSNorm" if getattr(c, "norm", "rms") == "rms" else "LayerNorm"
    x = f"[{batch}, {seq}, {d}]"
    return [
        ("ids", f"token ids [{batch}, {seq}]", "0.9"),
        (
            "embed",
            f"embed_tokens: a table {V} × {d}\n-> x {x}"
            + ("" if getattr(c, "positions", "rope") == "rope" else " + a learned position table"),
            "#cfe2f3",
        ),
        ("norm1", f"input_layernorm ({norm}) -> {x}", "#d9ead3"),
        (
            "qkv",
            f"q_proj: {d} -> {c.n_head * hd} ({c.n_head} heads × {hd})\n"
            f"k_proj: {d} -> {c.n_kv_head * hd} ({c.n_kv_head} heads × {hd}),  "
            f"v_proj: {d} -> {c.n_kv_head * hd}"
            + (
                "\nRoPE rotates q and k by position"
                if getattr(c, "positions", "rope") == "rope"
                else ""
            ),
            "#fff2cc",
        ),
        (
            "attn",
            f"causal attention: softmax(q·kᵀ/√{hd} + mask) "
            f"[{batch}, {c.n_head}, {seq}, {seq}] · v\n"
            + (
                f"each k/v head shared by {c.n_head // c.n_kv_head} query heads (GQA)"
                if c.n_kv_head != c.n_head
                else "one k/v head per query head"
            ),
            "#fce5cd",
        ),
        ("o", f"o_proj: {c.n_head * hd} -> {d}, then x + that -> {x}", "#fff2cc"),
        ("norm2", f"post_attention_layernorm ({norm}) -> {x}", "#d9ead3"),
        (
            "mlp",
            (
                f"gate_proj, up_proj: {d} -> {c.d_ff}; silu(gate) * up\n"
                if getattr(c, "mlp", "swiglu") == "swiglu"
                else f"up_proj: {d} -> {c.d_ff}; gelu\n"
            )
            + f"down_proj: {c.d_ff} -> {d}, then x + that -> {x}",
            "#ead1dc",
        ),
        ("final", f"final norm ({norm}) -> {x}", "#d9ead3"),
        (
            "head",
            f"lm_head (the embedding table, transposed): {d} -> {V}\n-> logits [{batch}, {seq}, "
            f"{V}]",
            "#cfe2f3",
        ),
    ]


def _draw_block_frame(ax, ys: dict[str, int], n_layer: int) -> None:
    """The dashed frame around the repeated decoder block's boxes, and its "× n_layer" label."""
    top, bottom = ys["norm1"] + 0.45, ys["mlp"] - 0.45
    ax.add_patch(
        FancyBboxPatch(
            (0.25, bottom),
            9.5,
            top - bottom,
            boxstyle="round,pad=0.05",
            fill=False,
            ls="--",
            ec="tab:gray",
            gid="block",
        )
    )
    ax.text(
        0.35,
        top - 0.05,
        f"decoder block × {n_layer}",
        ha="left",
        va="top",
        fontsize=9,
        color="tab:gray",
        gid="repeat",
    )


def _draw_residuals(ax, ys: dict[str, int]) -> None:
    """The residual stream: x skips each sub-layer and is added back."""
    for start, end in (("norm1", "o"), ("norm2", "mlp")):
        ax.annotate(
            "",
            xy=(9.2, ys[end]),
            xytext=(9.2, ys[start] + 0.35),
            arrowprops={"arrowstyle": "->", "color": "tab:blue"},
        )
        ax.text(
            9.3,
            (ys[start] + 0.35 + ys[end]) / 2,
            "residual: x skips, then is added",
            fontsize=7,
            color="tab:blue",
            rotation=90,
            va="center",
            ha="left",
        )


def transformer_block(config, batch: str = "B", seq: str = "T") -> Figure:
    """A diagram of one decoder block and what surrounds it, labelled with `config`'s shapes.

    `config` is a `course_lib.ModelConfig` (or anything with its fields). Each box names a step, the
    module that does it (the checkpoint's parameter names) and the shape it produces, e.g. `k_proj:
    576 -> 192`.
    """
    c = config
    d, hd, V = c.d_model, c.d_model // c.n_head, c.vocab_size
    rows = _block_rows(c, batch, seq)
    fig, ax = _new_figure((8.5, 9.5))
    ax.set_xlim(0, 10)
    ax.set_ylim(-0.5, len(rows) - 0.3)
    ax.axis("off")
    ys = {}
    for i, (key, text, color) in enumerate(rows):
        y = len(rows) - 1 - i
        ys[key] = y
        ax.text(
            5,
            y,
            text,
            ha="center",
            va="center",
            fontsize=8.5,
            gid=key,
            bbox={"boxstyle": "round,pad=0.4", "fc": color, "ec": "0.4"},
        )
    for a, b in zip(rows, rows[1:]):
        ax.annotate(
            "",
            xy=(5, ys[b[0]] + 0.28),
            xytext=(5, ys[a[0]] - 0.28),
            arrowprops={"arrowstyle": "->", "color": "0.3"},
        )
    _draw_block_frame(ax, ys, c.n_layer)
    _draw_residuals(ax, ys)
    ax.set_title(
        f"one forward pass: d_model {d}, {c.n_head} query / {c.n_kv_head} key-value heads of {hd}, "
        f"MLP {c.d_ff}, vocabulary {V}",
        fontsize=9,
    )
    return fig


def kv_cache_growth(
    lengths: Sequence[int], nbytes: Sequence[int], prompt_len: int, title: str = ""
) -> Figure:
    """The KV cache after each forward call: positions held (left) and bytes held (right), as
    measured.

    `lengths[s]` and `nbytes[s]` are the cache's positions and bytes after call s (call 0 = the
    prompt's prefill); `prompt_len` colours the prompt's positions. Left: one bar per call, prompt
    positions blue, generated ones orange, the position that call added outlined. Artists carry
    gids: "prompt", "generated" (bar parts), "bytes" (the line).
    """
    n = np.asarray(lengths, dtype=int)
    b = np.asarray(nbytes, dtype=float)
    if n.shape != b.shape or n.ndim != 1 or n.size == 0:
        raise ValueError(
            f"lengths and nbytes must be two equal, non-empty lists; got {n.shape} and {b.shape}"
        )
    fig, (ax, ax_b) = _new_figure(
        (11, 0.3 * len(n) + 2), 1, 2, gridspec_kw={"width_ratios": [3, 2]}
    )
    steps = np.arange(len(n))
    prompt_part = np.minimum(n, prompt_len)
    ax.barh(steps, prompt_part, color="tab:blue", gid="prompt")
    ax.barh(steps, n - prompt_part, left=prompt_part, color="tab:orange", gid="generated")
    for s in steps[1:]:
        ax.barh(s, n[s] - n[s - 1], left=n[s - 1], fill=False, ec="black", lw=1.2)
    ax.set_yticks(steps, ["prefill"] + [f"step {s}" for s in steps[1:]])
    ax.invert_yaxis()
    ax.set_xlabel("positions held (blue: prompt, orange: generated; outlined: added by that call)")
    ax.set_title(title or "the KV cache after each forward call", fontsize=9)
    ax_b.plot(n, b / 2**20, "o-", gid="bytes")
    ax_b.set_xlabel("positions held")
    ax_b.set_ylabel("MiB held (all layers, keys and values)")
    ax_b.set_title(
        f"{b[-1] / 2**20:.2f} MiB for {n[-1]} positions: {b[-1] / max(n[-1], 1):,.0f} bytes each",
        fontsize=9,
    )
    ax_b.set_xlim(0, n.max() * 1.05)
    ax_b.set_ylim(0, b.max() / 2**20 * 1.1)
    ax_b.grid(alpha=0.3)
    return fig


def knob(
    draw,
    sliders: Mapping[str, tuple],
    static: Sequence[Mapping[str, object]],
    interactive: bool | None = None,
    title: str = "",
) -> Figure:
    """Sliders for `draw(ax, **values)` where widgets can run, and always a static strip of the same
    picture.

    `sliders` maps a keyword of `draw` to `(min, max, step, start)` (ints make an integer slider,
    floats a float one). `static` lists the settings drawn side by side in the returned figure,
    which renders everywhere (an exported notebook, nbconvert, a kernel without ipywidgets).
    `interactive=None` shows the sliders when ipywidgets imports and an IPython kernel runs; True or
    False forces it. Returns the static figure.
    """
    if interactive is None:
        import sys

        interactive = "ipykernel" in sys.modules
    widget = None
    if interactive:
        try:
            import ipywidgets as widgets
        except ImportError:
            widget = None
        else:
            controls = {}
            for name, (lo, hi, step, start) in sliders.items():
                kind = (
                    widgets.IntSlider
                    if all(isinstance(v, int) for v in (lo, hi, step, start))
                    else widgets.FloatSlider
                )
                controls[name] = kind(
                    value=start,
                    min=lo,
                    max=hi,
                    step=step,
                    description=name,
                    continuous_update=False,
                )

            def _draw(**values):
                fig, ax = plt.subplots(figsize=(7, 3), layout="constrained")
                draw(ax, **values)
                plt.show()

            widget = widgets.interactive(_draw, **controls)
            from IPython.display import display

            display(widget)
    fig, axes = _new_figure((4.2 * len(static), 3.2), 1, len(static), sharey=True)
    for ax, values in zip(np.atleast_1d(axes), static):
        draw(ax, **values)
    if title:
        fig.suptitle(
            title + ("" if widget is not None else " (static: no live sliders here)"), fontsize=10
        )
    return fig
