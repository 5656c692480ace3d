"""004 section 7's analysis of a parameter study: degradation ranks, Fig. 9, Fig. 10, Table 12.

Tsafrir et al. (2007) ran EASY++ with every predictor configuration on four traces and
scored each configuration ``c`` under each trace/metric *testcase* ``t`` by its
*degradation* against the best configuration ``b`` of that testcase,
``100 * P_c / P_b - 100`` (lower metric values are better: average wait, average
bounded slowdown). The average of a configuration's degradations over the testcases
ranks it: rank 1 has the lowest average degradation. This module computes that ranking
from any table of results (one row per configuration and trace, with the metric
columns), and the figures the paper derives from it:

* :func:`rank_distribution` -- Fig. 9: for each parameter, the share of each of its
  values among the configurations in each 5 % bin of the ranking;
* :func:`size_degradation` -- Fig. 10: mean and standard deviation of the average
  degradation per window size;
* :func:`figure9` and :func:`figure10` draw them (matplotlib);
* :func:`subspace_statistics` -- Table 12: minimum, maximum, mean and standard deviation
  of the average degradation within a subspace (e.g. ``type=all, correction=estimate,
  k=1``) beside the whole space.

The table may hold any subset of the space (a sample); the degradations are then
relative to the best configuration *of the sample*, and ranks run from 1 to the sample's
size (the figures use rank / count, as the paper's use rank / 8,640).

>>> rows = [
...     {"config": "a", "k": 1, "trace": "X", "wait": 10.0, "bsld": 2.0},
...     {"config": "b", "k": 2, "trace": "X", "wait": 20.0, "bsld": 2.0},
... ]
>>> r = degradation_ranking(rows, parameters=("k",))
>>> r.configs, r.average.tolist(), r.rank.tolist()
(['a', 'b'], [0.0, 50.0], [1, 2])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.files import atomic_path, write_text_atomic

__all__ = [
    "Ranking",
    "degradation_ranking",
    "figure9",
    "figure10",
    "rank_distribution",
    "size_degradation",
    "subspace_statistics",
    "window_bin",
]


@dataclass(frozen=True)
class Ranking:
    """Configurations ranked by average degradation (004 section 7).

    Attributes:
        configs: configuration keys, in the order of the rows below (best first).
        parameters: ``{parameter: values}``, one value per configuration.
        testcases: ``(trace, metric)`` names of the degradation columns.
        degradation: ``(configs, testcases)`` per-testcase degradation in percent.
        average: mean degradation over the testcases, ascending.
        rank: 1-based ranks (ties share the better rank, as the paper's "7/8").
    """

    configs: list[str]
    parameters: dict[str, list[Any]]
    testcases: list[tuple[str, str]]
    degradation: np.ndarray
    average: np.ndarray
    rank: np.ndarray

    def __len__(self) -> int:
        return len(self.configs)

    def mask(self, **where: Any) -> np.ndarray:
        """Boolean mask of the configurations whose parameters equal (or are in) ``where``'s values.

        A value may be a scalar, a collection of allowed values, or a predicate.

        Raises:
            InvalidConfigError: a parameter the ranking does not have.
        """
        m = np.ones(len(self), dtype=bool)
        for name, want in where.items():
            if name not in self.parameters:
                raise InvalidConfigError(
                    f"subspace: unknown parameter {name!r}; the ranking has {', '.join(self.parameters)}"
                )
            values = self.parameters[name]
            if callable(want):
                ok = [bool(want(v)) for v in values]
            elif isinstance(want, (set, frozenset, list, tuple)):
                ok = [v in want for v in values]
            else:
                ok = [v == want for v in values]
            m &= np.asarray(ok, dtype=bool)
        return m

    def rows(self, top: int | None = None) -> list[dict[str, Any]]:
        """Table 11's rows: rank, average degradation, and each parameter's value."""
        n = len(self) if top is None else min(top, len(self))
        return [
            {
                "rank": int(self.rank[i]),
                "config": self.configs[i],
                "average_degradation_pct": float(self.average[i]),
                **{p: v[i] for p, v in self.parameters.items()},
            }
            for i in range(n)
        ]


def degradation_ranking(
    rows: Iterable[Mapping[str, Any]],
    parameters: Sequence[str],
    metrics: Sequence[str] = ("wait", "bsld"),
    config_key: str = "config",
    trace_key: str = "trace",
) -> Ranking:
    """Rank configurations by their average degradation over trace x metric testcases.

    Args:
        rows: one per configuration and trace, with ``config_key``, ``trace_key``, the
            ``parameters`` and the ``metrics`` (lower is better, all > 0).
        parameters: the columns that describe a configuration (kept for the figures).
        metrics: the metric columns; each with each trace is one testcase.
        config_key: the column naming a configuration.
        trace_key: the column naming a trace.

    Raises:
        InvalidConfigError: a missing column, a configuration missing from a trace or
            given twice for one, or a metric value that is not a positive number.
    """
    table: dict[str, dict[str, Mapping[str, Any]]] = {}
    params: dict[str, dict[str, Any]] = {}
    traces: list[str] = []
    for i, row in enumerate(rows):
        for col in (config_key, trace_key, *parameters, *metrics):
            if col not in row:
                raise InvalidConfigError(f"parameter study: row {i} has no column {col!r}")
        c, t = str(row[config_key]), str(row[trace_key])
        if t not in traces:
            traces.append(t)
        by_trace = table.setdefault(c, {})
        if t in by_trace:
            raise InvalidConfigError(f"parameter study: configuration {c!r} is given twice for trace {t!r}")
        by_trace[t] = row
        params[c] = {p: row[p] for p in parameters}
    if not table:
        raise InvalidConfigError("parameter study: no rows")
    configs = list(table)
    missing = [(c, t) for c in configs for t in traces if t not in table[c]]
    if missing:
        c, t = missing[0]
        raise InvalidConfigError(
            f"parameter study: configuration {c!r} has no result for trace {t!r} "
            f"({len(missing)} configuration/trace pairs missing)"
        )
    testcases = [(t, m) for t in traces for m in metrics]
    values = np.array([[float(table[c][t][m]) for t, m in testcases] for c in configs], dtype=float)
    if not np.all(np.isfinite(values) & (values > 0)):
        i, j = np.argwhere(~(np.isfinite(values) & (values > 0)))[0]
        raise InvalidConfigError(
            f"parameter study: {testcases[j][1]} of {configs[i]!r} on {testcases[j][0]!r} is "
            f"{float(values[i, j])}; degradations need positive values"
        )
    degradation = 100.0 * values / values.min(axis=0) - 100.0
    average = degradation.mean(axis=1)
    order = np.argsort(average, kind="stable")
    average = average[order]
    # Ties share the better rank ("7/8" in Table 11 is two configurations of one average).
    rank = np.searchsorted(average, average, side="left") + 1
    ordered = [configs[i] for i in order]
    return Ranking(
        configs=ordered,
        parameters={p: [params[c][p] for c in ordered] for p in parameters},
        testcases=testcases,
        degradation=degradation[order],
        average=average,
        rank=rank.astype(np.int64),
    )


def rank_distribution(
    ranking: Ranking, parameter: str, bins: int = 20, bin_of: Callable[[Any], Any] | None = None
) -> tuple[list[Any], np.ndarray]:
    """Fig. 9 for one parameter: the share of each value in each rank bin.

    Args:
        ranking: the ranked configurations.
        parameter: which parameter.
        bins: equal bins of rank / count (20 gives the paper's 5 % bins).
        bin_of: maps a value to its group (Fig. 9 groups window sizes 1-5, 6-10, ...).

    Returns:
        ``(values, shares)``: the values (groups) in first-seen order (numbers and
        window bins in numeric order) and a
        ``(len(values), bins)`` array whose columns sum to 1 (0 for an empty bin).
    """
    raw = ranking.parameters.get(parameter)
    if raw is None:
        raise InvalidConfigError(
            f"rank distribution: unknown parameter {parameter!r}; the ranking has "
            f"{', '.join(ranking.parameters)}"
        )
    grouped = [bin_of(v) if bin_of else v for v in raw]
    values = list(dict.fromkeys(grouped))
    if all(_numeric_start(v) is not None for v in values):  # sizes and their bins in numeric order
        values.sort(key=lambda v: _numeric_start(v) or 0.0)
    n = len(ranking)
    b = np.minimum(((ranking.rank - 1) * bins) // max(n, 1), bins - 1)
    counts = np.zeros((len(values), bins))
    index = {v: i for i, v in enumerate(values)}
    np.add.at(counts, ([index[v] for v in grouped], b), 1.0)
    totals = counts.sum(axis=0)
    shares = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    return values, shares


def _numeric_start(value: Any) -> float | None:
    """``value`` as a number, or the lower bound of a ``"1-5"`` bin; None for anything else."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value)
    head = str(value).split("-", 1)[0]
    return float(head) if head.isdigit() else None


def size_degradation(ranking: Ranking, parameter: str = "k") -> list[dict[str, float]]:
    """Fig. 10: mean and standard deviation of the average degradation per window size."""
    sizes = np.asarray(ranking.parameters[parameter])
    out = []
    for s in sorted(set(sizes.tolist())):
        a = ranking.average[sizes == s]
        out.append({"size": s, "configs": int(a.size), "mean": float(a.mean()), "std": float(a.std())})
    return out


def subspace_statistics(ranking: Ranking, **where: Any) -> dict[str, float]:
    """Table 12's statistics of the average degradation within a subspace.

    Raises:
        InvalidConfigError: the subspace is empty or names an unknown parameter.
    """
    inside = ranking.mask(**where)
    a = ranking.average[inside]
    if a.size == 0:
        raise InvalidConfigError(f"subspace {where}: no configuration of the ranking is in it")
    return {
        "configs": int(a.size),
        "min": float(a.min()),
        "max": float(a.max()),
        "mean": float(a.mean()),
        "std": float(a.std()),
        "best_rank": int(ranking.rank[inside].min()),
    }


def window_bin(size: int, width: int = 5) -> str:
    """Fig. 9's grouping of window sizes: ``1-5``, ``6-10``, ... (``width`` wide)."""
    lo = (int(size) - 1) // width * width + 1
    return f"{lo}-{lo + width - 1}"


def figure9(ranking: Ranking, parameters: Sequence[str], bins: int = 20, size_parameter: str = "k") -> Any:
    """Fig. 9: per parameter, the share of each value in each 5 % bin of the ranking.

    One panel per parameter, stacked bars over the rank bins (best on the left), as in
    004; window sizes are grouped in fives. Needs matplotlib (the ``plot`` extra).
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2.6 * len(parameters), 3.2), layout="constrained")
    axes = fig.subplots(1, len(parameters), sharey=True, squeeze=False)[0]
    x = (np.arange(bins) + 0.5) * 100.0 / bins
    for ax, p in zip(axes, parameters, strict=True):
        values, shares = rank_distribution(ranking, p, bins, window_bin if p == size_parameter else None)
        bottom = np.zeros(bins)
        for v, s in zip(values, shares, strict=True):
            ax.bar(x, s * 100.0, width=100.0 / bins, bottom=bottom, label=str(v), edgecolor="white", lw=0.3)
            bottom += s * 100.0
        ax.set_title(p)
        ax.set_xlabel("rank [% of configurations]")
        ax.set_xlim(0, 100)
        ax.legend(fontsize=6, loc="lower left")
    axes[0].set_ylabel("share of the bin [%]")
    return fig


def figure10(ranking: Ranking, size_parameter: str = "k") -> Any:
    """Fig. 10: mean and standard deviation of the average degradation per window size."""
    from matplotlib.figure import Figure

    rows = size_degradation(ranking, size_parameter)
    fig = Figure(figsize=(5, 3.2), layout="constrained")
    ax = fig.subplots()
    ax.errorbar(
        [r["size"] for r in rows],
        [r["mean"] for r in rows],
        yerr=[r["std"] for r in rows],
        fmt="o-",
        capsize=2,
    )
    ax.set_xlabel("window size (history jobs)")
    ax.set_ylabel("average degradation [%]")
    return fig


# ------------------------------------------------------------------ the study of a sweep
PARAMETERS = ("correction", "fallback", "propagation", "fullness", "metric", "type", "k")
"""004 section 7's parameters in Fig. 9's order (:data:`hpcgym.predict.PREDICTOR_SPACE`)."""

METRICS = {"wait": "mean_wait_s", "bsld": "mean_bsld"}
"""The testcase metrics (004: average wait and average bounded slowdown) and their sweep columns."""

FIGURES = ("fig9_ranks", "fig10_window_size")
"""The figures :func:`write_study` writes (``NAME.png``)."""

SUGGESTED = {"type": "all", "correction": "estimate", "metric": "avg"}
"""Table 12's suggested subspace, window sizes apart (004: sizes 1-2)."""


def study_rows(results: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """A sweep's result rows as :func:`degradation_ranking` rows, and notes on what was left out.

    Each row's predictor string is read as a :class:`hpcgym.predict.UserHistoryConfig`;
    its parameters become columns. Configurations measured on only some of the traces
    (an interrupted sweep) are left out and counted in the notes.

    Raises:
        InvalidConfigError: a predictor is not a ``user-history`` configuration, or the
            rows mix dispatchers or load factors (one ranking compares predictors only).
    """
    from hpcgym.predict import UserHistoryConfig

    rows: list[dict[str, Any]] = []
    for r in results:
        try:
            c = UserHistoryConfig.parse(str(r["predictor"]))
        except InvalidConfigError as err:
            raise InvalidConfigError(
                f"parameter study: predictor {r['predictor']!r} is not a user-history configuration: {err}"
            ) from err
        row = {p: getattr(c, p) for p in PARAMETERS}
        row["propagation"] = "yes" if row["propagation"] else "no"
        rows.append(
            {
                "config": str(c),
                **row,
                "trace": r["trace"],
                "dispatcher": r["dispatcher"],
                "load": r["load"],
                **{m: r[col] for m, col in METRICS.items()},
            }
        )
    for key in ("dispatcher", "load"):
        values = sorted({str(r[key]) for r in rows})
        if len(values) > 1:
            raise InvalidConfigError(
                f"parameter study: the sweep has several {key}s ({', '.join(values)}); rank one at a time"
            )
    traces = {r["trace"] for r in rows}
    seen: dict[str, set[str]] = {}
    for r in rows:
        seen.setdefault(r["config"], set()).add(r["trace"])
    partial = {c for c, t in seen.items() if t != traces}
    notes = []
    if partial:
        notes.append(
            f"{len(partial)} configurations measured on only some of the {len(traces)} traces are left out"
        )
    return [r for r in rows if r["config"] not in partial], notes


def findings(ranking: Ranking) -> list[dict[str, Any]]:
    """004 section 7's statements, each checked on ``ranking``, with the numbers behind the verdict.

    How each is read (004 states them in words; the thresholds are this module's):

    1. *Correction by estimate dominates the top ranks*: ``estimate`` is the most common
       correction in the top 5 % bin (004: about 90 %).
    2. *Gradual dominates the bottom*: ``gradual`` is the most common correction among
       the bottom half (004: it "dominates the bottom half").
    3. *Minimum with large windows is worst*: of the eight groups metric x (window < 7,
       window >= 7), ``min`` with windows >= 7 has the highest mean average degradation.
    4. *Small windows (1-2) of type all with average are robust*: within the subspace
       type ``all``, metric ``avg``, correction ``estimate``, windows 1-2 (Table 12),
       every configuration's average degradation is below the median of the whole
       ranking, and their worst is at most a tenth of the whole ranking's worst.
    """
    out: list[dict[str, Any]] = []
    n = len(ranking)
    corr = np.asarray(ranking.parameters["correction"])
    top = ranking.rank <= max(1, int(np.ceil(0.05 * n)))
    says = "correction by estimate dominates the top ranks (top 5 %)"
    out.append(_most_common(corr, top, "estimate", says, "top 5 %"))
    bottom = ranking.rank > n / 2
    says = "gradual correction dominates the bottom half"
    out.append(_most_common(corr, bottom, "gradual", says, "bottom half"))
    metric = np.asarray(ranking.parameters["metric"])
    large = np.asarray(ranking.parameters["k"]) >= 7
    groups = {}
    for m in sorted(set(metric.tolist())):
        for big in (False, True):
            sel = (metric == m) & (large == big)
            if sel.any():
                groups[f"{m}, window {'>= 7' if big else '< 7'}"] = float(ranking.average[sel].mean())
    worst = max(groups, key=lambda g: groups[g])
    out.append(
        {
            "statement": "minimum with large windows (>= 7) is worst",
            "holds": worst == "min, window >= 7",
            "numbers": {f"mean degradation of {g} [%]": v for g, v in groups.items()},
        }
    )
    sub = ranking.mask(**SUGGESTED, k={1, 2})
    median, worst_all = float(np.median(ranking.average)), float(ranking.average.max())
    if sub.any():
        sub_max = float(ranking.average[sub].max())
        holds = sub_max < median and sub_max <= worst_all / 10
        numbers = {
            "configurations": int(sub.sum()),
            "their worst degradation [%]": sub_max,
            "their mean [%]": float(ranking.average[sub].mean()),
            "median of all [%]": median,
            "worst of all [%]": worst_all,
        }
    else:
        holds, numbers = None, {"configurations": 0}
    out.append(
        {
            "statement": "small windows (1-2) of type all with average (correction by estimate) are robust",
            "holds": holds,
            "numbers": numbers,
        }
    )
    return out


def _most_common(values: np.ndarray, where: np.ndarray, value: str, says: str, part: str) -> dict[str, Any]:
    """The finding ``says``: ``value`` is the most common of ``values`` in the ``where`` (``part``) ranks."""
    shares = {v: float(np.mean(values[where] == v)) for v in sorted(set(values.tolist()))}
    return {
        "statement": says,
        "holds": max(shares, key=lambda v: shares[v]) == value,
        "numbers": {f"share of {v} in the {part}": s for v, s in shares.items()},
    }


def summarize(ranking: Ranking, notes: Sequence[str] = ()) -> dict[str, Any]:
    """The study's JSON: Table 11 (top ten and the last), Table 12, Fig. 10's rows, findings."""
    table12 = {
        f"k={k}": subspace_statistics(ranking, **SUGGESTED, k=k)
        for k in (1, 2)
        if ranking.mask(**SUGGESTED, k=k).any()
    }
    table12["all"] = subspace_statistics(ranking)
    return {
        "configurations": len(ranking),
        "testcases": [f"{t}/{m}" for t, m in ranking.testcases],
        "table11": ranking.rows(10) + ranking.rows()[-1:],
        "table12": table12,
        "figure10": size_degradation(ranking),
        "findings": findings(ranking),
        "notes": list(notes),
    }


def write_study(results: Sequence[Mapping[str, Any]], folder: Path, title: str = "") -> list[Path]:
    """Rank a sweep's configurations and write ``ranking.csv``, ``paramstudy.json`` and Figs. 9-10.

    Raises:
        InvalidConfigError: as :func:`study_rows` and :func:`degradation_ranking`.
    """
    from hpcgym.common.report import to_json, write_csv

    rows, notes = study_rows(results)
    ranking = degradation_ranking(rows, PARAMETERS, metrics=tuple(METRICS))
    folder.mkdir(parents=True, exist_ok=True)
    table = [
        {
            **r,
            **{
                f"{t}/{m}": float(d)
                for (t, m), d in zip(ranking.testcases, ranking.degradation[i], strict=True)
            },
        }
        for i, r in enumerate(ranking.rows())
    ]
    written = [folder / "ranking.csv", folder / "paramstudy.json"]
    write_csv(written[0], table, columns=list(table[0]))
    write_text_atomic(written[1], to_json(summarize(ranking, notes)) + "\n")
    fig10 = figure10(ranking)
    if title:
        fig10.suptitle(title)
    for name, fig in zip(FIGURES, (figure9(ranking, PARAMETERS), fig10), strict=True):
        written.append(folder / f"{name}.png")
        with atomic_path(written[-1]) as tmp:
            fig.savefig(tmp, dpi=100)
    return written
