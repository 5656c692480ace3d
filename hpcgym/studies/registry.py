"""The papers' studies by the names ``hpcgym study`` and ``hpcgym reproduce`` know them.

Data only: what each name runs, renders and writes. Reading the commands' arguments and
the workloads they name is :mod:`hpcgym.cli.study`'s and :mod:`hpcgym.cli.reproduce`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hpcgym.studies import galleguillos2017, galleguillos2019, hariharan, tsafrir2007
from hpcgym.workloads import Workload


@dataclass(frozen=True)
class Study:
    """A study ``hpcgym study`` runs end to end on one workload.

    Attributes:
        name: the CLI name.
        title: the paper.
        run: ``run(workload, dispatchers, predictions, *, cp_delta, processes, progress,
            seed) -> result``; ``dispatchers`` and ``predictions`` None: the study's own.
        render: the result as text: table, findings, notes.
        write: ``write(result, folder, plots=...)`` writes its JSON, CSV and figures and
            returns their paths.
    """

    name: str
    title: str
    run: Callable[..., dict[str, Any]]
    render: Callable[[dict[str, Any]], str]
    write: Callable[..., list[Path]]


def _run_galleguillos2017(
    workload: Workload,
    dispatchers: Sequence[str] | None,
    predictions: Sequence[str] | None,
    **options: Any,
) -> dict[str, Any]:
    """001's study with every prediction, W, D and R (choosing ``predictions`` is 002's)."""
    del predictions
    return galleguillos2017.run_galleguillos2017(workload, dispatchers=dispatchers, **options)


def _run_galleguillos2019(
    workload: Workload,
    dispatchers: Sequence[str] | None,
    predictions: Sequence[str] | None,
    **options: Any,
) -> dict[str, Any]:
    """002's study: the runs of :data:`~hpcgym.studies.galleguillos2019.RUNS` with ``dispatchers``
    and ``predictions`` (see :func:`~hpcgym.studies.galleguillos2019.select_runs`)."""
    runs = galleguillos2019.select_runs(dispatchers, predictions)
    return galleguillos2019.run_galleguillos2019(workload, runs=runs, **options)


STUDIES: dict[str, Study] = {
    "galleguillos2017": Study(
        "galleguillos2017",
        "Galleguillos et al. (2017): prediction and dispatching on Eurora (paper 001)",
        _run_galleguillos2017,
        galleguillos2017.render,
        galleguillos2017.write_outputs,
    ),
    "galleguillos2019": Study(
        "galleguillos2019",
        "Galleguillos et al. (2019): the CP dispatchers HCP and PCP, v0-v3 (paper 002)",
        _run_galleguillos2019,
        galleguillos2019.render,
        galleguillos2019.write_outputs,
    ),
}
"""Every study ``hpcgym study`` knows, by CLI name."""


@dataclass(frozen=True)
class Reproduction:
    """A paper whose tables ``hpcgym reproduce`` recomputes.

    Attributes:
        name: the CLI name.
        title: the paper.
        run: on one trace, ``run(workload, *, extra, predictability_runs, progress)``; on
            ``several_traces``, ``run(workloads, settings, *, tables, skipped)`` with the
            settings of :class:`~hpcgym.studies.hariharan.Settings`. Either returns a
            JSON-ready result.
        render: the result as text tables.
        plot: ``plot(result, path)`` writes the result as a PNG, or (``several_traces``) as
            a folder of files.
        several_traces: the paper's tables are over several traces (``--trace`` repeated).
    """

    name: str
    title: str
    run: Callable[..., dict[str, Any]]
    render: Callable[[dict[str, Any]], str]
    plot: Callable[[dict[str, Any], str | Path], Any]
    several_traces: bool = False


REPRODUCTIONS: dict[str, Reproduction] = {
    "tsafrir2007": Reproduction(
        "tsafrir2007",
        "Tsafrir, Etsion, Feitelson (2007): Backfilling using system-generated predictions "
        "rather than user runtime estimates -- Tables 2, 3 and 6",
        tsafrir2007.run_tsafrir2007,
        tsafrir2007.render_tsafrir2007,
        tsafrir2007.plot_tsafrir2007,
    ),
    "hariharan": Reproduction(
        "hariharan",
        "Hariharan et al. (003): End-to-end predictions-based resource management framework "
        "for supercomputer jobs -- Tables V, VI and VII",
        hariharan.run_hariharan,
        hariharan.render_hariharan,
        hariharan.write_hariharan,
        several_traces=True,
    ),
}
"""Every paper ``hpcgym reproduce`` knows, by CLI name."""
