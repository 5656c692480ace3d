"""Writing schedule files (``simulate --schedule-out``): the formats by suffix, the CSV read back, and
the write being atomic (matplotlib not needed; the pictures' reading of them is test_pictures.py)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from hpcgym.baselines import run_policy
from hpcgym.cli import simulate as simulate_cli
from hpcgym.common.errors import InvalidConfigError
from hpcgym.sim import SCHEDULE_SUFFIXES, check_schedule_path, read_schedule, write_schedule
from hpcgym.workloads import load_default, read_swf


@pytest.fixture(scope="module")
def schedule():
    return run_policy(load_default().window(40), "easy", progress=False).schedule


def test_the_cli_suffixes_are_the_library_s():
    assert simulate_cli.SCHEDULE_SUFFIXES == SCHEDULE_SUFFIXES


def test_each_format_by_its_suffix(schedule, tmp_path):
    w = schedule.workload
    for name in ("s.csv", "s.json", "s.swf", "s.swf.gz"):
        write_schedule(tmp_path / name, schedule)
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert lines[0] == "job_id,submit,start,end,procs,estimate,wait,nodes" and len(lines) == 41
    back = read_schedule(tmp_path / "s.csv")
    np.testing.assert_array_equal(back.start, schedule.start)  # %.17g: exact
    records = json.loads((tmp_path / "s.json").read_text())
    assert [r["job_id"] for r in records] == w.job_id.tolist() and records[0]["nodes"] == [0]
    for name in ("s.swf", "s.swf.gz"):
        swf = read_swf(tmp_path / name)
        np.testing.assert_array_equal(swf.submit + swf.log_wait, schedule.start)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv", "s.json", "s.swf", "s.swf.gz"]


def test_a_schedule_file_is_written_atomically(schedule, tmp_path, monkeypatch):
    def broken(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    for name in ("s.csv", "s.json", "s.swf.gz"):
        (tmp_path / name).write_text("old\n")
        with pytest.raises(OSError, match="disk full"):
            write_schedule(tmp_path / name, schedule)
        assert (tmp_path / name).read_text() == "old\n"  # the old file, whole; no temporary file left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv", "s.json", "s.swf.gz"]


def test_unknown_suffix_or_folder_is_an_error_naming_the_option(schedule, tmp_path):
    with pytest.raises(InvalidConfigError, match=r"^--schedule-out .*s\.txt: unknown file type; use one of"):
        check_schedule_path(tmp_path / "s.txt", "--schedule-out")
    with pytest.raises(InvalidConfigError, match=r"^schedule file .*: no such directory"):
        write_schedule(tmp_path / "absent" / "s.csv", schedule)
