"""`hpcgym reproduce ... --plot` writes a picture of ours beside the paper's figures, every label legible."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from hpcgym.cli import main
from hpcgym.studies.tsafrir2007 import PAPER_LABELS, TSAFRIR2007_PAPER, render_tsafrir2007
from hpcgym.workloads import default_trace_path

pytest.importorskip("matplotlib")


def test_reproduce_writes_a_png_beside_its_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.png"
    code = main(
        [
            "reproduce",
            "tsafrir2007",
            "--trace",
            str(default_trace_path()),
            "--jobs",
            "600",
            "--plot",
            str(out),
        ]
    )
    assert code == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 10_000  # three panels of bars, not an empty canvas
    text = capsys.readouterr().out
    assert "Table 3" in text
    # every table counts the jobs each scheduler's averages are over
    assert sum(line.startswith("jobs measured ") for line in text.splitlines()) == 3


def paper_like_result(scale: float = 1.004) -> dict:
    """A result whose figures sit right beside the paper's (SDSC): the case whose labels overlapped."""
    paper = TSAFRIR2007_PAPER["SDSC"]
    results = {
        name: {
            "paper_name": PAPER_LABELS[name],
            "wait_min": scale * p[0],
            "bsld": scale * p[1],
            "accuracy_pct": min(100.0, scale * p[2]),
            "jobs_measured": 53_500,
        }
        for name, p in paper.items()
    }
    return {"paper_trace": "SDSC", "trace": "SDSC-SP2", "jobs": 54_044, "procs": 128, "results": results}


def test_no_label_overlaps_another() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from hpcgym.studies.tsafrir2007 import tsafrir2007_figure

    fig = tsafrir2007_figure(paper_like_result())
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    axes = fig.axes
    assert len(axes) == 3
    names = [t.get_text() for t in axes[0].get_yticklabels()]
    assert names == [PAPER_LABELS[n] for n in TSAFRIR2007_PAPER["SDSC"]]
    for ax in axes:
        labels = [t for t in ax.texts if t.get_text()]  # the bar labels: ours and the paper's
        assert len(labels) == 16
        boxes = [t.get_window_extent(renderer) for t in labels]
        boxes += [t.get_window_extent(renderer) for t in axes[0].get_yticklabels()] if ax is axes[0] else []
        for a, b in itertools.combinations(boxes, 2):
            assert not a.overlaps(b), (a, b)
        # and every label inside its panel
        panel = ax.get_window_extent(renderer)
        for box in boxes[:16]:
            assert panel.x0 - 1 <= box.x0 and box.x1 <= panel.x1 + 1
    w, h = fig.get_size_inches()
    assert w * fig.dpi <= 1200 and h * fig.dpi <= 900


def test_the_rendered_tables_name_the_measured_sets() -> None:
    result = paper_like_result()
    result.update(extra="classic", tables={}, predictability=None)
    result["results"]["sjf"]["jobs_measured"] = 20_000  # under half the jobs
    text = render_tsafrir2007(result)
    assert "each scheduler's own first 1 % of jobs to end" in text
    assert "note: SJF: only 20,000 of 54,044 jobs (37 %) are measured" in text
    assert "note: EASY:" not in text
