"""Every notebook's code cells run top to bottom (no Jupyter needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    nb = json.loads(path.read_text())
    code = [("".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "code"]
    assert code, f"{path.name} has no code cells"
    namespace: dict[str, object] = {"__name__": "__notebook__"}
    for i, source in enumerate(code):
        try:
            exec(compile(source, f"{path.name}[cell {i}]", "exec"), namespace)
        except Exception as err:  # pragma: no cover - the message is the point
            raise AssertionError(f"{path.name}: code cell {i} failed: {err!r}") from err
