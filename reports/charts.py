"""Charts of stored results (matplotlib, written as PNG and SVG).

Each function returns a Figure whose title states what was played (variant,
strategy, number of deals) and whose axes carry units; `save` writes it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from reports.formats import p_clause
from reports.ledger import Ledger
from reports.output import contained, safe_name
from reports.tables import Tournament

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_RC = {"svg.fonttype": "none", "figure.dpi": 110, "axes.spines.top": False, "axes.spines.right": False,
       "text.parse_math": False}
"""The report's matplotlib settings; text.parse_math off: a name with dollar signs from data is shown as written,
never parsed as mathtext."""


@functools.cache
def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on its file backend (Agg) with the report's settings, loaded on first use: a rebuild
    that reuses every chart (`Painter`) never pays its second of start-up."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(_RC)
    return plt


Z95 = 1.959963984540054
MAX_LABEL_CHARS = 60
MAX_TITLE_CHARS = 160
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_POINTS = 400
"""Most points a line of a convergence chart keeps (log-spaced), whatever the number of deals."""
AXIS_NAMES = {"face_down": "face-down cards per pile", "columns": "piles", "cards_per_column": "cards per pile"}


def label(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """Chart text made from data (names): control characters shown as '?', cut to ``limit`` characters with '…',
    so that a hostile or very long name can neither break the SVG nor stretch the figure."""
    text = _CONTROL.sub("?", str(text))
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return " " + text if text.startswith("_") else text  # matplotlib hides legend entries whose label starts with _


def save(fig: Figure, out_dir: Path, stem: str, digest: str = "", png: bool = False) -> dict[str, Path]:
    """Write ``stem.svg`` into ``out_dir`` (with ``digest`` of its inputs in its metadata), and ``stem.png``
    beside it when ``png`` (for slides and papers); return their paths by format.

    SVG by default: each format costs a full drawing, and SVG serves both the HTML (inlined)
    and the Markdown (linked)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = contained(out_dir, out_dir / f"{safe_name(stem, set())}.svg")
    fig.savefig(path, bbox_inches="tight", metadata={"Description": f"{_DIGEST_TAG}{digest}"})
    paths = {"svg": path}
    if png:
        paths["png"] = path.with_suffix(".png")
        fig.savefig(paths["png"], bbox_inches="tight", dpi=200)
    pyplot().close(fig)
    return paths


_DIGEST_TAG = "bakers-dozen chart inputs "
_CODE = hashlib.sha256(Path(__file__).read_bytes() + importlib.metadata.version("matplotlib").encode()).hexdigest()


def _feed(h: Any, obj: Any) -> None:
    """Feed ``obj`` (frames, arrays, numbers, text, containers, dataclasses) into hash ``h``, by value."""
    if isinstance(obj, pd.DataFrame):
        h.update(repr((list(obj.columns), obj.dtypes.astype(str).tolist())).encode())
        h.update(pd.util.hash_pandas_object(obj, index=True).to_numpy().tobytes())
    elif isinstance(obj, pd.Series):
        _feed(h, obj.to_frame())
    elif isinstance(obj, np.ndarray):
        h.update(f"{obj.dtype}{obj.shape}".encode())
        h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, list | tuple):
        h.update(f"[{len(obj)}".encode())
        for x in obj:
            _feed(h, x)
    elif dataclasses.is_dataclass(obj):
        _feed(h, [getattr(obj, f.name) for f in dataclasses.fields(obj)])
    else:
        h.update(f"{type(obj).__name__}:{obj!r};".encode())


def _draw_task(task: tuple[Callable[..., Figure], tuple[Any, ...], Path, str, str, bool]) -> None:
    """One chart, in whichever process draws it: ``task`` is (make, args, out_dir, stem, digest, png), and
    ``make(*args)`` is saved as ``stem`` (see `save`)."""
    make, args, out_dir, stem, digest, png = task
    save(make(*args), out_dir, stem, digest, png)


class Painter:
    """Draws the charts of one report into ``out_dir``.

    A chart whose inputs (the data and text it is drawn from, the chart code and matplotlib's version)
    are those of a chart of the same name in ``earlier`` (the previous report's ``charts/``) is copied
    from there instead of drawn again, when that report's ledger says it wrote the file from those inputs
    and the file is unchanged since (`reports.ledger`): rebuilding a report whose deals are all reused
    redraws nothing, and a chart edited in between is drawn again, never inlined.
    The others are drawn by `finish`, side by side on every core (a report of the default study has
    about fifty, a third of a second each), so a chart's file exists only once `finish` has returned.
    """

    def __init__(self, out_dir: Path, earlier: Path | None = None, png: bool = False) -> None:
        self.out_dir, self.earlier, self.png = out_dir, earlier, png
        self.ledger = Ledger(out_dir, earlier)
        self.drawn = self.reused = 0
        self._pending: list[tuple[Callable[..., Figure], tuple[Any, ...], str, str]] = []

    def finish(self) -> None:
        """Draw every chart asked for since the last call (a worker process a core when there are several,
        `studies.backends.map_in_workers`), and write the folder's ledger."""
        from joblib import cpu_count

        from studies.backends import map_in_workers

        pending, self._pending = self._pending, []
        map_in_workers(_draw_task, [(make, args, self.out_dir, stem, digest, self.png) for make, args, stem, digest in pending],
                       cpu_count())
        self.ledger.seal()

    def __call__(self, make: Callable[..., Figure], stem: str, *args: Any) -> dict[str, Path]:
        """Where ``make(*args)`` is saved as ``stem`` (see `save`; drawn by `finish`), or the earlier identical
        chart, copied."""
        h = hashlib.sha256(f"{_CODE}{make.__name__}".encode())
        _feed(h, args)
        digest = h.hexdigest()
        name = f"{safe_name(stem, set())}.svg"
        names = {"svg": name, **({"png": name.removesuffix(".svg") + ".png"} if self.png else {})}
        taken = {fmt: self.ledger.take(n, digest) for fmt, n in names.items()}
        if all(p is not None for p in taken.values()):  # the PNG too when it is asked for, or both are drawn again
            self.reused += 1
            return {fmt: p for fmt, p in taken.items() if p is not None}
        for n in names.values():
            self.ledger.wrote(n, digest)
        paths = {fmt: contained(self.out_dir, self.out_dir / n) for fmt, n in names.items()}
        self.drawn += 1
        self._pending.append((make, args, stem, digest))
        return paths


def _plain_log(axis: Any, text: Callable[[float], str]) -> None:
    """Label a log-scale ``axis`` in plain text, major ticks by ``text`` and minor ticks not at all.

    matplotlib's log formatter writes mathtext (``$\\mathdefault{10^{2}}$``), which with the report's
    ``text.parse_math`` off and ``svg.fonttype`` "none" would reach the SVG as raw TeX."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: text(v)))
    axis.set_minor_formatter(NullFormatter())


def _percent(ax, axis: str = "x") -> None:  # noqa: ANN001
    from matplotlib.ticker import PercentFormatter

    fmt = PercentFormatter(xmax=1.0, decimals=None)
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_formatter(fmt)


def win_rates(table: pd.DataFrame, title: str) -> Figure:
    """Win rate per run with its 95% interval; ``table`` has label, win_rate, ci_low, ci_high, deals."""
    n = len(table)
    fig, ax = pyplot().subplots(figsize=(8.5, 0.45 * n + 1.6))
    y = np.arange(n)[::-1]
    rate = table["win_rate"].to_numpy()
    err = np.clip(np.vstack([rate - table["ci_low"].to_numpy(), table["ci_high"].to_numpy() - rate]), 0, None)
    ax.barh(y, rate, color="#4c78a8", alpha=0.85, height=0.6)
    ax.errorbar(rate, y, xerr=err, fmt="none", ecolor="black", elinewidth=1.2, capsize=3)
    ax.set_yticks(y, [f"{label(lab)}  (n={d:,})" for lab, d in zip(table["label"], table["deals"], strict=True)])
    for yi, r, hi in zip(y, rate, table["ci_high"], strict=True):
        ax.text(hi, yi, f"  {r:.2%}", va="center", fontsize=8)
    ax.set_xlim(0, min(1.0, max(0.05, float(table["ci_high"].max()) * 1.25)))
    _percent(ax)
    ax.set_xlabel("win rate (bars: 95% Wilson interval)")
    ax.set_title(label(title, MAX_TITLE_CHARS), fontsize=10)
    return fig


def sample_points(start: int, n: int, most: int = MAX_POINTS) -> np.ndarray:
    """At most ``most`` deal counts from ``start`` to ``n`` (both included), evenly spaced on a log scale,
    so that a chart's size does not grow with the number of deals."""
    if n < start:
        return np.zeros(0, dtype=np.int64)
    if n - start < most:
        return np.arange(start, n + 1, dtype=np.int64)
    points = np.unique(np.geomspace(start, n, num=min(most, n - start + 1)).round().astype(np.int64))
    return np.unique(np.r_[start, points, n])


@dataclasses.dataclass(frozen=True)
class RunningWins:
    """A run's wins counted as its deals accumulate, at the deal counts a convergence chart draws (`curve_points`):
    ``wins[i]`` of the first ``points[i]`` deals, out of ``deals`` in all."""

    deals: int
    points: np.ndarray
    wins: np.ndarray

    def at(self, n: np.ndarray) -> np.ndarray:
        """The wins among the first ``n`` deals, for each of ``n`` (deal counts of `curve_points`)."""
        return self.wins[np.searchsorted(self.points, n)]


def curve_points(deals: int) -> np.ndarray:
    """Every deal count a convergence chart of a run of ``deals`` deals may draw (from 1 or from 10)."""
    return np.union1d(sample_points(1, deals), sample_points(10, deals))


def convergence(series: list[tuple[str, RunningWins]], title: str) -> Figure:
    """Running win rate as deals accumulate, with its 95% Wilson band; ``series`` = (label, its `RunningWins`).

    Each line is drawn through at most `MAX_POINTS` log-spaced deal counts (`sample_points`); the rate at each is exact.
    """
    fig, ax = pyplot().subplots(figsize=(8.5, 4.2))
    # the first few deals say little and their bands would fill the plot: start at 10 when there are enough
    start = 10 if min(w.deals for _, w in series) >= 100 else 1
    for name, won in series:
        n = sample_points(start, won.deals)
        p = won.at(n) / n
        denom = 1 + Z95**2 / n
        centre = (p + Z95**2 / (2 * n)) / denom
        half = Z95 * np.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denom
        (line,) = ax.plot(n, p, lw=1.3, label=f"{label(name)} ({p[-1]:.2%} after {n[-1]:,})")
        ax.fill_between(n, centre - half, centre + half, color=line.get_color(), alpha=0.15, lw=0)
    ax.set_xscale("log")
    _plain_log(ax.xaxis, lambda v: f"{v:,.0f}")
    ax.set_xlabel(f"deals played (log scale, from {start})")
    ax.set_ylabel("win rate so far")
    _percent(ax, "y")
    ax.legend(fontsize=8, loc="best")
    ax.set_title(label(title, MAX_TITLE_CHARS), fontsize=10)
    return fig


def cards_home(series: list[tuple[str, np.ndarray]], title: str) -> Figure:
    """Share of deals ending with k cards home, k = 0..52; ``series`` = (label, deals per number of cards home:
    ``counts[k]`` deals ended with k home)."""
    fig, ax = pyplot().subplots(figsize=(8.5, 4.2))
    k = np.arange(53)
    for name, counts in series:
        counts = np.asarray(counts, dtype=np.int64)
        n = int(counts.sum())
        share = np.concatenate([counts, np.zeros(53, dtype=np.int64)])[:53] / max(n, 1)
        mean = int((np.arange(counts.size) * counts).sum()) / n if n else float("nan")
        ax.step(k, share, where="mid", lw=1.3, label=f"{label(name)} (mean {mean:.1f})")
    ax.set_xlim(-0.5, 52.5)
    ax.set_xlabel("cards home at the end of the deal (52 = won)")
    ax.set_ylabel("share of deals")
    _percent(ax, "y")
    ax.legend(fontsize=8)
    ax.set_title(label(title, MAX_TITLE_CHARS), fontsize=10)
    return fig


def grouped(table: pd.DataFrame, title: str) -> Figure:
    """One group of bars per variant, one bar per player, on a log scale so that rates under 1% show;
    ``table`` has variant, player, win_rate, ci_low, ci_high (in order). Whiskers are 95% intervals;
    a rate of 0 is drawn as a marker on the axis with its interval's upper end."""
    variants = list(dict.fromkeys(table["variant"]))
    players = list(dict.fromkeys(table["player"]))
    k = len(players)
    width = 0.8 / k
    fig, ax = pyplot().subplots(figsize=(max(8.5, 0.32 * len(table) + 2.5), 5.2))
    values = table[["ci_low", "win_rate"]].to_numpy(dtype=float)
    values = values[values > 1e-6]  # the lower end of a 0-win interval is 0 up to rounding
    floor = 10.0 ** np.floor(np.log10(min(float(values.min()) / 2 if values.size else 1e-3, 1e-2)))
    colours = pyplot().rcParams["axes.prop_cycle"].by_key()["color"]
    for j, player in enumerate(players):
        g = table[table["player"] == player]
        x = np.array([variants.index(v) for v in g["variant"]]) - 0.4 + width * (j + 0.5)
        rate = g["win_rate"].to_numpy(dtype=float)
        shown = np.maximum(rate, floor)
        low = np.maximum(g["ci_low"].to_numpy(dtype=float), floor)
        high = np.maximum(g["ci_high"].to_numpy(dtype=float), floor)
        colour = colours[j % len(colours)]
        ax.bar(x, shown - floor, bottom=floor, width=width * 0.92, color=colour, alpha=0.85, label=label(player))
        ax.errorbar(x, shown, yerr=np.clip(np.vstack([shown - low, high - shown]), 0, None), fmt="none", ecolor="black", elinewidth=0.9,
                    capsize=2)
        zero = rate <= 0
        ax.plot(x[zero], shown[zero], ls="none", marker="v", color=colour, markersize=5)
    ax.set_yscale("log")
    ax.set_ylim(floor, 1.0)
    _plain_log(ax.yaxis, lambda v: f"{v * 100:g}%")
    ax.set_xticks(range(len(variants)), [label(v, 32) for v in variants], rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("win rate (log scale; whiskers: 95% Wilson interval; ▼: no win)")
    ax.legend(fontsize=8, ncols=min(k, 3), loc="upper left", bbox_to_anchor=(0, -0.28))
    ax.set_title(label(title, MAX_TITLE_CHARS), fontsize=10)
    return fig


def tournament_matrix(t: Tournament, title: str) -> Figure:
    """Heat map: deals the row strategy won and the column strategy lost, with Holm-adjusted p-values."""
    names = [label(n) for n in t.wins_over.index]
    m = t.wins_over.to_numpy(dtype=float)
    k = len(names)
    fig, ax = pyplot().subplots(figsize=(1.3 * k + 3.5, 1.0 * k + 2.2))
    im = ax.imshow(m, cmap="Blues")
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            p = t.adjusted_p.iloc[i, j]
            text = f"{int(m[i, j]):,}\n{p_clause(p)}" if np.isfinite(p) else f"{int(m[i, j]):,}"
            ax.text(j, i, text, ha="center", va="center", fontsize=8,
                    color="white" if m[i, j] > 0.6 * max(m.max(), 1) else "black")
    ax.set_xticks(range(k), names, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(k), names, fontsize=8)
    ax.set_xlabel("lost by (column)")
    ax.set_ylabel("won by (row)")
    fig.colorbar(im, ax=ax, label="deals won by row, lost by column")
    ax.set_title(label(title, MAX_TITLE_CHARS), fontsize=10)
    return fig


def sweep(table: pd.DataFrame, parameter: str, title: str) -> Figure:
    """Win rate against a swept rule parameter, one line per strategy; ``table`` has
    ``value``, ``strategy``, win_rate, ci_low, ci_high."""
    fig, ax = pyplot().subplots(figsize=(8.5, 4.2))
    for strategy, g in table.groupby("strategy", sort=False):
        g = g.sort_values("value")
        x = g["value"].to_numpy(dtype=float)
        r = g["win_rate"].to_numpy()
        err = np.clip(np.vstack([r - g["ci_low"].to_numpy(), g["ci_high"].to_numpy() - r]), 0, None)
        ax.errorbar(x, r, yerr=err, marker="o", capsize=3, lw=1.3, label=label(str(strategy)))
    ax.set_xticks(sorted(table["value"].unique()))
    ax.set_xlabel(AXIS_NAMES.get(parameter, parameter.replace("_", " ")))
    ax.set_ylabel("win rate (bars: 95% Wilson interval)")
    _percent(ax, "y")
    ax.legend(fontsize=8)
    ax.set_title(label(title, MAX_TITLE_CHARS), fontsize=10)
    return fig


def budget_curve(table: pd.DataFrame, ceilings: dict[str, float], title: str) -> Figure:
    """Win rate against CPU seconds a deal (log scale), one line per variant; ``table`` has variant,
    cpu_s_per_deal, win_rate, ci_low, ci_high; ``ceilings`` the clairvoyant win rate of each variant, drawn as a
    dashed line of its colour."""
    fig, ax = pyplot().subplots(figsize=(8.5, 4.4))
    for i, (variant, g) in enumerate(table.groupby("variant", sort=False)):
        g = g.sort_values("cpu_s_per_deal")
        r = g["win_rate"].to_numpy()
        err = np.clip(np.vstack([r - g["ci_low"].to_numpy(), g["ci_high"].to_numpy() - r]), 0, None)
        colour = f"C{i}"
        ax.errorbar(g["cpu_s_per_deal"].to_numpy(dtype=float), r, yerr=err, marker="o", capsize=3, lw=1.3,
                    color=colour, label=label(f"{variant}, honest"))
        if variant in ceilings:
            ax.axhline(ceilings[variant], color=colour, ls="--", lw=1,
                       label=label(f"{variant}, clairvoyant {ceilings[variant]:.1%}"))
    ax.set_xscale("log")
    _plain_log(ax.xaxis, lambda v: f"{v:g}")
    ax.set_xlabel("CPU seconds a deal (one core)")
    ax.set_ylabel("win rate (bars: 95% Wilson interval)")
    ax.set_ylim(0, 1.02)
    _percent(ax, "y")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(label(title, MAX_TITLE_CHARS), fontsize=10)
    return fig


def winnability(table: pd.DataFrame, title: str) -> Figure:
    """The share of deals winnable with perfect play, one line per atlas row: the share proven won as a dot, the 95%
    interval (lower Wilson bound of the won deals to upper bound of the won and unknown ones) as its whisker;
    ``table`` has label, win_rate, ci_low, ci_high, deals, clairvoyant. A hollow dot is a clairvoyant figure (the
    solver saw face-down cards). The axis starts just under the lowest interval, so that rates near 100% part."""
    n = len(table)
    fig, ax = pyplot().subplots(figsize=(8.5, 0.42 * n + 1.8), layout="constrained")
    y = np.arange(n)[::-1]
    rate = table["win_rate"].to_numpy(dtype=float)
    low, high = table["ci_low"].to_numpy(dtype=float), table["ci_high"].to_numpy(dtype=float)
    seen = table["clairvoyant"].to_numpy(dtype=bool)
    ax.errorbar(rate, y, xerr=np.clip(np.vstack([rate - low, high - rate]), 0, None), fmt="none", ecolor="black",
                elinewidth=1.2, capsize=3)
    ax.plot(rate[~seen], y[~seen], ls="none", marker="o", color="#4c78a8", label="share proven won")
    ax.plot(rate[seen], y[seen], ls="none", marker="o", markerfacecolor="white", color="#4c78a8",
            label="share proven won, clairvoyant (the solver saw the face-down cards)")
    for yi, r in zip(y, rate, strict=True):
        ax.annotate(f"{r:.2%}", (r, yi), xytext=(0, 5), textcoords="offset points", ha="center", fontsize=7)
    ax.set_yticks(y, [f"{label(lab)}  (n={d:,})" for lab, d in zip(table["label"], table["deals"], strict=True)])
    span = 1.0 - float(low.min())
    ax.set_xlim(max(0.0, float(low.min()) - 0.08 * span), 1.0 + 0.02 * span)
    ax.set_ylim(-0.7, n - 0.3)
    _percent(ax)
    ax.set_xlabel("deals winnable with perfect play (whiskers: 95% interval, unknown deals counted as either)")
    fig.legend(fontsize=8, loc="outside lower center", ncols=2)
    ax.set_title(label(title, MAX_TITLE_CHARS), fontsize=10)
    return fig
