"""Full-trace reproduction of Tsafrir et al. (2007) Table 3, EASY column (slow: `make bench`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcgym.runner import run_policy
from hpcgym.workload import read_swf

TRACES = Path(__file__).resolve().parents[2] / "shared" / "traces"

# trace file, machine size, paper's (average wait [min], average bounded slowdown)
EASY_TABLE3 = [
    ("SDSC-SP2-1998-4.2-cln.swf.gz", None, (363.0, 99.0)),
    ("CTC-SP2-1996-3.1-cln.swf.gz", 512, (21.0, 4.6)),
]


@pytest.mark.expensive
@pytest.mark.parametrize(("name", "procs", "paper"), EASY_TABLE3, ids=["SDSC-SP2", "CTC-SP2"])
def test_easy_walltime_within_ten_percent_of_table3(
    name: str, procs: int | None, paper: tuple[float, float]
) -> None:
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"{name} not found in shared/traces (the reproduction needs the real trace)")
    row = run_policy(read_swf(path, procs=procs), "easy", "walltime").row
    wait_min = row["mean_wait_s"] / 60.0
    assert wait_min == pytest.approx(paper[0], rel=0.10)
    assert row["mean_bsld"] == pytest.approx(paper[1], rel=0.10)
