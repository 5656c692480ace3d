"""`hpcgym reproduce ... --plot` writes a picture of ours beside the paper's figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcgym.cli import main
from hpcgym.workload import default_trace_path

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
    assert "Table 3" in capsys.readouterr().out
