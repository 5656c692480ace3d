"""Every notebook runs top to bottom in a real Jupyter kernel (nbmake's executor)."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))

nb_run = pytest.importorskip("nbmake.nb_run", reason="the dev extra installs nbmake")


def run_notebook(path: Path, timeout: int = 600) -> str | None:
    """Execute ``path`` in a fresh kernel (cwd: its folder); the failing cell's error, or None."""
    result = nb_run.NotebookRun(path, default_timeout=timeout).execute()
    if result.error is None:
        return None
    error = result.error
    return f"{path.name}: cell {error.failing_cell_index} failed: {error.summary}\n{error.trace}"


def test_there_are_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS] == ["quickstart.ipynb", "train_agent.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    error = run_notebook(path)
    assert error is None, error


def test_a_failing_cell_is_reported(tmp_path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("raise ValueError('boom')")]
    path = tmp_path / "bad.ipynb"
    nbformat.write(nb, str(path))
    error = run_notebook(path, timeout=120)
    assert error is not None and "cell 1" in error and "boom" in error
