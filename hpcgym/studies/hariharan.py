"""``hpcgym reproduce hariharan``: 003's prediction tables on the paper's traces.

Hariharan et al. (003) evaluate queue-wait prediction (Table V: AAE and scaled AAE of
QBETS, IBL and APQ), execution-time rangeSets (Table VI: success rate SR and coverage
C against the baseline range) and their point predictions (Table VII: AAE) on seven
PWA logs. This recomputes the three tables on the traces given (``--trace``, repeatable)
or, by default, on the four of them that are public and cleaned in the Parallel
Workloads Archive, looked up in ``--traces-dir`` (SDSC-SP2, HPC2N, CEA-Curie,
SDSC-Par; an absent one is skipped with a note), and writes each table's layout with
the paper's figures beside the measured ones as JSON, CSV and a PNG.

Nothing is re-implemented here: Table V is :func:`hpcgym.predict.waitpred.predict_waits`
(003 section V's protocol, tuned on the validation set), Tables VI and VII are
:func:`hpcgym.predict.evaluate_runtime_predictor` (``hpcgym predict-eval``'s run),
Tables VIII and IX (job molding, delayed submission) are
:func:`hpcgym.baselines.molding.run_managed` (``hpcgym mold``'s run, EASY underneath).
Each table is one :class:`TableBuilder` of :data:`TABLES`: a function from a
:class:`TraceRun` to its rows and one drawing them; ``--tables`` picks some.

Open details chosen here:

* Smith et al.'s and Li et al.'s predictors (Tables VI and VII) are not in hpcgym:
  their columns hold the paper's figures only.
* ``--quick`` runs a scaled-down protocol that fits the bundled slice of SDSC-SP2:
  history from job 1,000, validation jobs 1,500-1,999, test jobs 2,001-3,000 (rangeSets:
  the same test jobs), without tuning; molding and delayed submission manage 1,000
  jobs after 2,000 of history, with IBL's wait predictions instead of APQ's (faster);
  ``--test-jobs N`` caps the test jobs of every evaluation, the managed jobs
  included. Both are for trying the command, not for comparing with the paper.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.common.files import atomic_path, write_text_atomic
from hpcgym.common.report import Column, format_table, to_json, write_csv
from hpcgym.predict import (
    PAPER_TABLES,
    TABLE_V,
    LogState,
    Protocol,
    RuntimeEvaluation,
    WaitPrediction,
    apq_comparisons,
    evaluate_runtime_predictor,
    predict_waits,
)
from hpcgym.workloads import Workload

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from hpcgym.baselines import MoldingResult

PAPER_TRACES = ("SDSC-SP2", "HPC2N", "CEA-Curie", "SDSC-Par")
"""The paper's traces whose cleaned logs the Parallel Workloads Archive has, in this order."""

TABLE_V_SCALED = {
    "ANL-Intrepid": {"qbets": 35.15, "ibl": 0.93, "apq": 0.55},
    "CEA-Curie": {"qbets": 2444.03, "ibl": 18.21, "apq": 20.35},
    "DAS2": {"qbets": 32.03, "ibl": 3.13, "apq": 1.07},
    "HPC2N": {"qbets": 3020.44, "ibl": 40.82, "apq": 23.29},
    "SDSC-BLUE": {"qbets": 319.93, "ibl": 3.56, "apq": 3.56},
    "SDSC-Par": {"qbets": 1078.39, "ibl": 6.63, "apq": 2.87},
    "SDSC-SP2": {"qbets": 391.61, "ibl": 51.48, "apq": 11.81},
}
"""003 Table V: scaled AAE of QBETS, IBL and APQ (AAE in hours: :data:`hpcgym.predict.waitpred.TABLE_V`)."""

OTHER_RUNTIME_PREDICTORS = {
    # Table VI: (SR %, C %) of Smith et al. and Li et al.; Table VII: their AAE in minutes
    "SDSC-SP2": {
        "smith_SR": 69,
        "smith_C": 339,
        "li_SR": 76,
        "li_C": 213,
        "smith_AAE_min": 56,
        "li_AAE_min": 69,
    },
    "HPC2N": {
        "smith_SR": 63,
        "smith_C": 166,
        "li_SR": 72,
        "li_C": 140,
        "smith_AAE_min": 46,
        "li_AAE_min": 67,
    },
    "CEA-Curie": {
        "smith_SR": 58,
        "smith_C": 218,
        "li_SR": 62,
        "li_C": 206,
        "smith_AAE_min": 66,
        "li_AAE_min": 76,
    },
    "SDSC-Par": {
        "smith_SR": 70,
        "smith_C": 145,
        "li_SR": 75,
        "li_C": 113,
        "smith_AAE_min": 41,
        "li_AAE_min": 58,
    },
}
"""003 Tables VI and VII: the figures of the two predictors hpcgym does not have, by trace."""

QUICK_PROTOCOL = Protocol(1_000, 1_500, 500, 2_001, 3_000, min_test_jobs=1)
"""``--quick``: a protocol the bundled slice of SDSC-SP2 (8,943 jobs) holds."""


def paper_trace(name: str, keys: Sequence[str] = tuple(TABLE_V)) -> str | None:
    """The paper's name of a trace whose file name starts like it (case-insensitive), or None.

    >>> paper_trace("SDSC-Par-1996-3.1-cln"), paper_trace("CTC-SP2-1996-3.1-cln")
    ('SDSC-Par', None)
    """
    low = name.lower()
    return next((k for k in keys if low.startswith(k.lower())), None)


@dataclass(frozen=True)
class Settings:
    """What one reproduction runs.

    Attributes:
        protocol: the job ranges of the queue-wait predictions (003 section V).
        tune: tune each wait predictor on the validation set first.
        runtime_first: first (0-based) test job of the rangeSet evaluation.
        runtime_jobs: rangeSet test jobs (fewer when the trace ends first).
        history: terminated jobs the baseline range reads (003: 15,000).
        mold_history: unmanaged jobs before the managed ones (Tables VIII, IX; 003: 10,000).
        mold_jobs: managed jobs; None: 003's, 20,000 for molding and 6,000 for delay.
        mold_wait_predictor: the molding manager's queue-wait predictor.
        progress: show progress bars on stderr.
    """

    protocol: Protocol = dataclasses.field(default_factory=Protocol)
    tune: bool = True
    runtime_first: int = 20_000
    runtime_jobs: int = 40_000
    history: int = 15_000
    mold_history: int = 10_000
    mold_jobs: int | None = None
    mold_wait_predictor: str = "apq"
    progress: bool = False

    def __post_init__(self) -> None:
        if self.runtime_first < 0 or self.runtime_jobs < 1 or self.history < 0:
            raise InvalidConfigError(
                f"rangeSet test jobs from {self.runtime_first} ({self.runtime_jobs} jobs, history "
                f"{self.history}): need first >= 0, jobs >= 1, history >= 0"
            )

    @classmethod
    def make(
        cls, *, quick: bool = False, test_jobs: int | None = None, tune: bool = True, **kw: Any
    ) -> Settings:
        """The paper's settings, or ``quick``'s; ``test_jobs`` caps the test jobs of both evaluations.

        Raises:
            InvalidConfigError: ``test_jobs`` < 1.
        """
        protocol = QUICK_PROTOCOL if quick else Protocol()
        first, jobs = (2_000, 1_000) if quick else (20_000, 40_000)
        if quick:
            kw = {"mold_history": 2_000, "mold_jobs": 1_000, "mold_wait_predictor": "ibl", **kw}
        if test_jobs is not None:
            if test_jobs < 1:
                raise InvalidConfigError(f"--test-jobs must be at least 1, got {test_jobs}")
            protocol = dataclasses.replace(
                protocol,
                test_last=min(protocol.test_last, protocol.test_first + test_jobs - 1),
                min_test_jobs=min(protocol.min_test_jobs, test_jobs),
            )
            jobs = min(jobs, test_jobs)
            kw["mold_jobs"] = min(kw.get("mold_jobs") or test_jobs, test_jobs)
        return cls(protocol, tune and not quick, first, jobs, **kw)


class TraceRun:
    """One trace's predictions, computed when a table first asks for them and kept for the others."""

    def __init__(self, workload: Workload, settings: Settings) -> None:
        self.workload = workload
        self.settings = settings
        self.name = workload.name
        self.paper = paper_trace(workload.name)
        self._managed: dict[str, MoldingResult] = {}

    @functools.cached_property
    def log(self) -> LogState:
        return LogState.from_workload(self.workload)

    @functools.cached_property
    def waits(self) -> list[WaitPrediction]:
        """QBETS, IBL and APQ on the protocol's test jobs (Table V's order)."""
        s = self.settings
        return [
            predict_waits(self.log, m, protocol=s.protocol, tune_on_validation=s.tune, progress=s.progress)
            for m in ("qbets", "ibl", "apq")
        ]

    @functools.cached_property
    def runtimes(self) -> RuntimeEvaluation:
        """The rangeSet predictor's ranges and points for the test jobs, fed the logged schedule."""
        s = self.settings
        return evaluate_runtime_predictor(
            self.workload, "rangeset", s.runtime_first, s.runtime_jobs, history=s.history, progress=s.progress
        )

    def managed(self, mode: str) -> MoldingResult:
        """003's resource manager in ``mode`` (``"molding"`` or ``"delay"``) and EASY beside it."""
        from hpcgym.baselines import MoldingConfig, run_managed

        s = self.settings
        config = MoldingConfig(
            mode=mode, history=s.mold_history, jobs=s.mold_jobs, wait_predictor=s.mold_wait_predictor
        )
        if mode not in self._managed:
            self._managed[mode] = run_managed(self.workload, config, progress=s.progress)
        return self._managed[mode]


@dataclass(frozen=True)
class TableBuilder:
    """One of 003's tables: its rows for one trace, its layout and its figure.

    Attributes:
        key: the table's number (``"V"``); files are ``table<key>.json/.csv/.png``.
        title: what it shows.
        columns: ``(key, header, format)`` of the text table; the CSV has the same keys.
        rows: a trace's rows, measured figures beside the paper's (``paper_*`` keys).
        figure: the rows of every trace drawn as one figure.
    """

    key: str
    title: str
    columns: tuple[Column, ...]
    rows: Callable[[TraceRun], list[dict[str, Any]]]
    figure: Callable[[list[dict[str, Any]]], Figure]


def _table_v_rows(run: TraceRun) -> list[dict[str, Any]]:
    rows = []
    for pred in run.waits:
        row = pred.summary()
        paper = run.paper
        row["paper_trace"] = paper
        row["paper_scaled_aae"] = TABLE_V_SCALED[paper][pred.method] if paper else None
        ours, theirs = row["aae_hours"], row["paper_aae_hours"]
        row["aae_vs_paper_pct"] = 100.0 * (ours / theirs - 1.0) if theirs else None
        row.pop("config", None)
        row["config"] = dataclasses.asdict(pred.config)
        rows.append(row)
    return rows


def _runtime_row(run: TraceRun) -> dict[str, Any]:
    row = run.runtimes.metrics()
    key = paper_trace(run.name, tuple(PAPER_TABLES))
    row["paper_trace"] = key
    for name, value in (PAPER_TABLES.get(key or "") or {}).items():
        row[f"paper_{name}"] = value
    for name, value in (OTHER_RUNTIME_PREDICTORS.get(key or "") or {}).items():
        row[f"paper_{name}"] = value
    return row


def _table_vi_rows(run: TraceRun) -> list[dict[str, Any]]:
    keep = ("AAE_min", "paper_AAE_min", "paper_smith_AAE_min", "paper_li_AAE_min")
    return [{k: v for k, v in _runtime_row(run).items() if k not in keep}]


def _table_vii_rows(run: TraceRun) -> list[dict[str, Any]]:
    row = _runtime_row(run)
    keep = (
        "trace",
        "paper_trace",
        "predictor",
        "test_jobs",
        "jobs_evaluated",
        "jobs_without_history",
        *(
            "AAE_min",
            "paper_AAE_min",
            "paper_smith_AAE_min",
            "paper_li_AAE_min",
        ),
    )
    return [{k: row.get(k) for k in keep}]


def _managed_rows(mode: str) -> Callable[[TraceRun], list[dict[str, Any]]]:
    """Table VIII (``molding``) or IX (``delay``): EASY and the managed run, the paper's beside."""
    from hpcgym.baselines import PAPER

    def rows(run: TraceRun) -> list[dict[str, Any]]:
        result = run.managed(mode)
        row = {k: v for k, v in result.summary().items() if k != "utilization"}
        row["utilization"] = result.utilization.get("managed")
        row["baseline_utilization"] = result.utilization.get("baseline")
        key = paper_trace(run.name, tuple(PAPER[mode]))
        row["paper_trace"] = key
        names = ("baseline_wait", "baseline_exec", "baseline_response", "wait", "exec", "response")
        for name, value in zip(names, PAPER[mode].get(key or "", (None,) * 6), strict=True):
            row[f"paper_{name}_min"] = value
        if key is not None:
            row["paper_reduction_pct"] = 100.0 * (1.0 - PAPER[mode][key][5] / PAPER[mode][key][2])
        try:
            c = result.comparison()
        except ImportError:  # scipy (the stats extra) is missing: no interval
            c = {}
        row["response_difference_min"] = c.get("response_difference_min")
        row["ci_low_min"], row["ci_high_min"] = c.get("ci_low"), c.get("ci_high")
        row["blocks"] = c.get("blocks")
        return [row]

    return rows


def _managed_figure(title: str) -> Callable[[list[dict[str, Any]]], Figure]:
    def figure(rows: list[dict[str, Any]]) -> Figure:
        traces = [_short(r["trace"]) for r in rows]
        fig, (ax,) = _figure(
            f"{title}: mean response [min], hpcgym beside the paper, log scale", 1, width=9.0
        )
        _bars(
            ax,
            traces,
            [
                ("EASY", [r["baseline_response_min"] for r in rows], {"color": "tab:green"}),
                (
                    "EASY (paper)",
                    [r.get("paper_baseline_response_min") for r in rows],
                    _PAPER_EASY,
                ),
                ("managed", [r["response_min"] for r in rows], _OURS),
                ("managed (paper)", [r.get("paper_response_min") for r in rows], _PAPER),
            ],
        )
        ax.set_yscale("log")  # a manager that overloads the machine multiplies the response
        ax.set_ylabel("mean response [minutes]")
        ax.legend(fontsize=8, ncols=4, loc="upper center")
        return fig

    return figure


def _bars(ax: Axes, groups: list[str], series: list[tuple[str, list[float | None], dict[str, Any]]]) -> None:
    """Grouped vertical bars: one group per label, one bar per series (None: no bar)."""
    x = np.arange(len(groups))
    width = 0.8 / max(len(series), 1)
    for i, (label, values, style) in enumerate(series):
        ys = [math.nan if v is None else float(v) for v in values]
        bars = ax.bar(x + (i - (len(series) - 1) / 2) * width, ys, width, label=label, **style)
        ax.bar_label(bars, fmt="%.3g", fontsize=7, padding=1, rotation=90)
    ax.set_xticks(x, groups, fontsize=9)
    ax.grid(axis="y", alpha=0.3, which="both")
    ax.set_axisbelow(True)
    ax.margins(y=0.25)


def _figure(title: str, panels: int, width: float = 11.0) -> tuple[Figure, list[Axes]]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, 4.2), dpi=100, layout="constrained")
    axes = fig.subplots(1, panels, squeeze=False)[0]
    fig.suptitle(title, fontsize=10)
    return fig, list(axes)


_OURS = {"color": "tab:blue"}
_PAPER = {"color": "0.65"}
_PAPER_EASY = {"color": "palegreen"}
_METHOD_COLORS = {"qbets": "tab:red", "ibl": "tab:orange", "apq": "tab:blue"}


def _table_v_figure(rows: list[dict[str, Any]]) -> Figure:
    traces = list(dict.fromkeys(r["trace"] for r in rows))
    fig, (ax,) = _figure(
        "003 Table V: queue-wait AAE [h], hpcgym (solid) beside the paper (hatched), log scale", 1
    )
    series = []
    for m in ("qbets", "ibl", "apq"):
        by = {r["trace"]: r for r in rows if r["method"] == m}
        color = _METHOD_COLORS[m]
        series.append(
            (m.upper(), [by[t]["aae_hours"] if t in by else None for t in traces], {"color": color})
        )
        paper = [by[t]["paper_aae_hours"] if t in by else None for t in traces]
        series.append((f"{m.upper()} (paper)", paper, {"color": "white", "edgecolor": color, "hatch": "//"}))
    _bars(ax, [_short(t) for t in traces], series)
    ax.set_yscale("log")  # QBETS's bound is several times the others' errors
    ax.set_ylabel("AAE [hours]")
    ax.legend(fontsize=8, ncols=3)
    return fig


def _table_vi_figure(rows: list[dict[str, Any]]) -> Figure:
    traces = [_short(r["trace"]) for r in rows]
    fig, (sr, cov) = _figure("003 Table VI: rangeSets of execution times, hpcgym beside the paper", 2)
    _bars(
        sr,
        traces,
        [
            ("baseline", [r["baseline_SR"] for r in rows], {"color": "tab:green"}),
            ("baseline (paper)", [r.get("paper_baseline_SR") for r in rows], _PAPER_EASY),
            ("rangeSet", [r["SR"] for r in rows], _OURS),
            ("rangeSet (paper)", [r.get("paper_SR") for r in rows], _PAPER),
        ],
    )
    sr.set_ylabel("success rate SR [%]")
    sr.set_ylim(0, 115)
    sr.legend(fontsize=8, ncols=4, loc="upper center")
    _bars(
        cov,
        traces,
        [
            ("mean of ratios", [r["C"] for r in rows], _OURS),
            ("ratio of totals", [r["C_of_totals"] for r in rows], {"color": "tab:cyan"}),
            ("median", [r["C_median"] for r in rows], {"color": "lightblue"}),
            ("paper", [r.get("paper_C") for r in rows], _PAPER),
        ],
    )
    cov.set_yscale("log")  # per-job ratios are heavy-tailed (narrow baseline ranges)
    cov.set_ylabel("coverage C [% of the baseline range], log scale")
    cov.legend(fontsize=8, ncols=2, loc="upper right")
    return fig


def _table_vii_figure(rows: list[dict[str, Any]]) -> Figure:
    traces = [_short(r["trace"]) for r in rows]
    fig, (ax,) = _figure("003 Table VII: point predictions of execution time, AAE [min]", 1, width=8.0)
    _bars(
        ax,
        traces,
        [
            ("rangeSet point", [r["AAE_min"] for r in rows], _OURS),
            ("rangeSet point (paper)", [r.get("paper_AAE_min") for r in rows], _PAPER),
            ("Smith et al. (paper)", [r.get("paper_smith_AAE_min") for r in rows], {"color": "0.8"}),
            ("Li et al. (paper)", [r.get("paper_li_AAE_min") for r in rows], {"color": "0.9"}),
        ],
    )
    ax.set_ylabel("AAE [minutes]")
    ax.legend(fontsize=8, ncols=2)
    return fig


def _short(trace: str) -> str:
    return paper_trace(trace) or trace


_MANAGED_COLUMNS: tuple[Column, ...] = (
    ("trace", "trace", ""),
    ("jobs", "jobs", ",d"),
    ("baseline_wait_min", "EASY wait", ".0f"),
    ("paper_baseline_wait_min", "paper", ".0f"),
    ("baseline_exec_min", "EASY exec", ".0f"),
    ("paper_baseline_exec_min", "paper", ".0f"),
    ("baseline_response_min", "EASY resp.", ".0f"),
    ("paper_baseline_response_min", "paper", ".0f"),
    ("wait_min", "wait", ".0f"),
    ("paper_wait_min", "paper", ".0f"),
    ("exec_min", "exec", ".0f"),
    ("paper_exec_min", "paper", ".0f"),
    ("response_min", "resp.", ".0f"),
    ("paper_response_min", "paper", ".0f"),
    ("reduction_pct", "reduction %", ".0f"),
    ("paper_reduction_pct", "paper", ".0f"),
    ("response_difference_min", "resp. - EASY", "+.0f"),
    ("ci_low_min", "95% CI low", "+.0f"),
    ("ci_high_min", "high", "+.0f"),
)
"""Tables VIII and IX: minutes, 003's layout, the paper's figure after each of ours."""


TABLES: tuple[TableBuilder, ...] = (
    TableBuilder(
        "V",
        "Table V: queue-wait prediction, AAE [h] and scaled AAE of QBETS, IBL, APQ",
        (
            ("trace", "trace", ""),
            ("method", "method", ""),
            ("jobs", "test jobs", ",d"),
            ("aae_hours", "AAE [h]", ".2f"),
            ("paper_aae_hours", "paper", ".2f"),
            ("aae_vs_paper_pct", "vs paper %", "+.0f"),
            ("scaled_aae", "scaled AAE", ".2f"),
            ("paper_scaled_aae", "paper", ".2f"),
            ("mean_wait_hours", "mean wait [h]", ".2f"),
        ),
        _table_v_rows,
        _table_v_figure,
    ),
    TableBuilder(
        "VI",
        "Table VI: execution-time rangeSets, SR and C [%] (Smith et al., Li et al.: the paper's only)",
        (
            ("trace", "trace", ""),
            ("jobs_evaluated", "jobs", ",d"),
            ("jobs_without_history", "no history", ",d"),
            ("baseline_SR", "baseline SR", ".1f"),
            ("paper_baseline_SR", "paper", ".0f"),
            ("SR", "rangeSet SR", ".1f"),
            ("paper_SR", "paper", ".0f"),
            ("C", "C mean", ".1f"),
            ("C_of_totals", "C totals", ".1f"),
            ("C_median", "C median", ".1f"),
            ("paper_C", "paper C", ".0f"),
            ("paper_smith_SR", "Smith SR", ".0f"),
            ("paper_smith_C", "Smith C", ".0f"),
            ("paper_li_SR", "Li SR", ".0f"),
            ("paper_li_C", "Li C", ".0f"),
        ),
        _table_vi_rows,
        _table_vi_figure,
    ),
    TableBuilder(
        "VII",
        "Table VII: execution-time point predictions, AAE [min] (Smith et al., Li et al.: the paper's only)",
        (
            ("trace", "trace", ""),
            ("jobs_evaluated", "jobs", ",d"),
            ("AAE_min", "rangeSet AAE", ".1f"),
            ("paper_AAE_min", "paper", ".0f"),
            ("paper_smith_AAE_min", "Smith", ".0f"),
            ("paper_li_AAE_min", "Li", ".0f"),
        ),
        _table_vii_rows,
        _table_vii_figure,
    ),
    TableBuilder(
        "VIII",
        "Table VIII: job molding in front of EASY, mean wait, execution and response [min]",
        _MANAGED_COLUMNS,
        _managed_rows("molding"),
        _managed_figure("003 Table VIII, job molding"),
    ),
    TableBuilder(
        "IX",
        "Table IX: delayed submission (molding and a hold queue) in front of EASY [min]",
        _MANAGED_COLUMNS,
        _managed_rows("delay"),
        _managed_figure("003 Table IX, delayed submission"),
    ),
)
"""The tables ``hpcgym reproduce hariharan`` writes, in order; add one builder per new table."""

FIGURES = tuple(f"table{t.key}" for t in TABLES)
"""The PNG files (without ``.png``) written into ``-o DIR``."""


def find_paper_traces(folder: Path) -> tuple[list[Path], list[str]]:
    """The paper's traces found in ``folder`` (cleaned logs first) and a note for each absent one."""
    found, notes = [], []
    for name in PAPER_TRACES:
        hits = sorted(folder.glob(f"{name}-*.swf*"), key=lambda p: ("cln" not in p.name, p.name))
        if hits:
            found.append(hits[0])
        else:
            notes.append(f"{name}: no {name}-*.swf[.gz] in {folder}; skipped")
    return found, notes


def run_hariharan(
    workloads: Sequence[Workload],
    settings: Settings,
    *,
    tables: Sequence[TableBuilder] = TABLES,
    skipped: Sequence[str] = (),
) -> dict[str, Any]:
    """Every table of ``tables`` on every workload; a JSON-ready dict.

    Returns:
        ``reproduction``, ``traces``, ``skipped`` (notes), ``settings``, ``tables`` (per
        key: ``title`` and ``rows``, the measured and the paper's figures side by side),
        ``comparisons`` (APQ's AAE minus IBL's and QBETS's per trace, paired over blocks
        of 1,000 test jobs with 95 % intervals; empty without scipy).
    """
    from tqdm import tqdm

    out: dict[str, Any] = {
        "reproduction": "hariharan",
        "traces": [w.name for w in workloads],
        "skipped": list(skipped),
        "settings": dataclasses.asdict(settings),
        "tables": {t.key: {"title": t.title, "rows": []} for t in tables},
        "comparisons": [],
    }
    steps = [(w, t) for w in workloads for t in tables]
    runs: dict[int, TraceRun] = {}
    with tqdm(steps, desc="hariharan", unit="table", file=sys.stderr, disable=not settings.progress) as bar:
        for w, table in bar:
            bar.set_postfix_str(f"{w.name}: Table {table.key}")
            run = runs.setdefault(id(w), TraceRun(w, settings))
            out["tables"][table.key]["rows"] += table.rows(run)
    for run in runs.values():
        if "waits" in run.__dict__:
            out["comparisons"] += [{"trace": run.name, **c} for c in apq_comparisons(run.waits)]
    return out


def render_hariharan(result: dict[str, Any]) -> str:
    """Each table as text, the paper's figures in the columns beside ours."""
    builders = {t.key: t for t in TABLES}
    lines = [f"Hariharan et al. (003) on {', '.join(result['traces'])}"]
    lines += [f"note: {n}" for n in result["skipped"]]
    for key, table in result["tables"].items():
        lines += ["", table["title"], format_table(table["rows"], builders[key].columns)]
    for c in result["comparisons"]:
        if not (math.isfinite(c["ci_low"]) and math.isfinite(c["ci_high"])):
            lines.append(f"{c['trace']}: {c['a']} - {c['b']}: too few test jobs for an interval")
            continue
        lines.append(
            f"{c['trace']}: {c['a']} - {c['b']}: AAE {c['aae_difference_hours']:+.2f} h, 95 % CI "
            f"[{c['ci_low']:+.2f}, {c['ci_high']:+.2f}] over {c['blocks']} blocks of test jobs"
        )
    return "\n".join(lines)


def write_hariharan(result: dict[str, Any], folder: str | Path) -> list[Path]:
    """``hariharan.json``, and per table ``table<key>.csv`` and ``table<key>.png`` in ``folder``.

    Raises:
        MissingExtraError: matplotlib is missing (``pip install 'hpcgym[plot]'``).
    """
    from hpcgym.common.extras import require

    require("plot", what="reproduce hariharan -o")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "hariharan.json"]
    write_text_atomic(written[0], to_json(result))
    for t in TABLES:
        rows = result["tables"].get(t.key, {}).get("rows")
        if rows is None:
            continue
        csv = folder / f"table{t.key}.csv"
        keys = list(dict.fromkeys(k for r in rows for k in r if not isinstance(r[k], (dict, list))))
        write_csv(csv, rows, keys)
        png = folder / f"table{t.key}.png"
        fig = t.figure(rows)
        with atomic_path(png) as tmp:
            fig.savefig(tmp, dpi=100)
        written += [csv, png]
    return written


def select_tables(names: str | None) -> tuple[TableBuilder, ...]:
    """The builders of ``--tables`` (comma-separated keys, e.g. ``VIII,IX``), in 003's order; None: all.

    Raises:
        InvalidConfigError: a key that is not one of the tables.
    """
    if names is None:
        return TABLES
    keys = {k.strip().upper() for k in names.split(",") if k.strip()}
    known = [t.key for t in TABLES]
    unknown = sorted(keys - set(known))
    if unknown or not keys:
        raise InvalidConfigError(
            f"--tables: {', '.join(unknown) or 'none given'}; 003's tables here are {', '.join(known)}"
        )
    return tuple(t for t in TABLES if t.key in keys)


__all__ = [
    "FIGURES",
    "PAPER_TRACES",
    "TABLES",
    "Settings",
    "TableBuilder",
    "TraceRun",
    "find_paper_traces",
    "render_hariharan",
    "run_hariharan",
    "select_tables",
    "write_hariharan",
]
