"""Every file hpcgym writes is written atomically: a failure mid-write leaves the old file whole.

One test per kind of output (text and JSON, CSV tables, converted job tables, Parquet,
models saved by training, figures, machine files, schedules), each failing the real writer
part-way through, and a scan of the sources for writes that bypass the atomic helpers.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from hpcgym.common import files
from hpcgym.common.files import atomic_path, write_atomic, write_text_atomic
from hpcgym.common.report import write_csv
from hpcgym.machine import Machine, write_machine
from hpcgym.workloads import Workload, read_jobs, write_jobs

OLD = b"the earlier, complete file\n"


class Interrupted(Exception):
    """Stands for a kill or a full disk in the middle of a write."""


def _old(path: Path) -> Path:
    path.write_bytes(OLD)
    return path


def _assert_untouched(path: Path) -> None:
    assert path.read_bytes() == OLD
    leftovers = [p.name for p in path.parent.iterdir() if p != path]
    assert leftovers == [], f"temporary files left behind: {leftovers}"


def _fail_on_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bytes are all written to the temporary file; the write fails before the rename."""

    def fsync(fd: int) -> None:
        raise Interrupted("disk full")

    monkeypatch.setattr(files.os, "fsync", fsync)


def _workload() -> Workload:
    return Workload.from_columns([0, 5, 9], [10, 20, 30], [1, 2, 4], [15, 25, 35], procs=4)


def test_bytes_written_in_pieces_fail_between_pieces(tmp_path):
    path = _old(tmp_path / "schedule.csv")

    def pieces():
        yield b"job_id,submit\n"
        raise Interrupted

    with pytest.raises(Interrupted):
        write_atomic(path, pieces())
    _assert_untouched(path)


def test_text_and_json(tmp_path, monkeypatch):
    path = _old(tmp_path / "training.json")
    _fail_on_fsync(monkeypatch)
    with pytest.raises(Interrupted):
        write_text_atomic(path, '{"new": true}\n')
    _assert_untouched(path)


def test_csv_table_fails_mid_rows(tmp_path):
    path = _old(tmp_path / "summary.csv")

    def rows():
        yield {"policy": "easy"}
        raise Interrupted

    with pytest.raises(Interrupted):
        write_csv(path, rows(), ["policy"])
    _assert_untouched(path)


@pytest.mark.parametrize("name", ["jobs.csv", "jobs.csv.gz"])
def test_converted_job_table(tmp_path, monkeypatch, name):
    path = _old(tmp_path / name)
    _fail_on_fsync(monkeypatch)
    with pytest.raises(Interrupted):
        write_jobs(_workload(), path)
    _assert_untouched(path)


def test_parquet_fails_mid_write(tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    path = _old(tmp_path / "jobs.parquet")

    def write_table(table, where, **kwargs):
        Path(where).write_bytes(b"PAR1 half a file")
        raise Interrupted

    monkeypatch.setattr(pq, "write_table", write_table)
    with pytest.raises(Interrupted):
        write_jobs(_workload(), path)
    _assert_untouched(path)
    monkeypatch.undo()
    write_jobs(_workload(), path)  # and a write that succeeds replaces it
    assert len(read_jobs(path, procs=4)) == 3


def test_sweep_parquet_table(tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    from hpcgym.experiments.sweep.table import write_parquet

    path = _old(tmp_path / "results.parquet")
    monkeypatch.setattr(pq, "write_table", lambda t, where, **kw: Path(where).write_bytes(b"PAR1") and 1 / 0)
    with pytest.raises(ZeroDivisionError):
        write_parquet([{"key": "a"}], path, columns=["key"])
    _assert_untouched(path)


def test_model_saved_by_training(tmp_path):
    from hpcgym.agents.models import METADATA_MEMBER, save_model

    class HalfSaved:
        def save(self, where):
            Path(where).write_bytes(b"PK\x03\x04 half a zip")
            raise Interrupted

    class Saves:
        def save(self, where):
            with zipfile.ZipFile(where, "w") as z:
                z.writestr("data", "{}")

    path = _old(tmp_path / "best_model.zip")
    with pytest.raises(Interrupted):
        save_model(HalfSaved(), path, {"format": 1})
    _assert_untouched(path)
    assert save_model(Saves(), path, {"format": 1}) == path
    with zipfile.ZipFile(path) as z:
        assert set(z.namelist()) == {"data", METADATA_MEMBER}
    assert [p.name for p in tmp_path.iterdir()] == ["best_model.zip"]


def test_figure(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from hpcgym.studies import tsafrir2007

    def savefig(self, where, **kwargs):
        Path(where).write_bytes(b"\x89PNG half a picture")
        raise Interrupted

    monkeypatch.setattr(Figure, "savefig", savefig)
    monkeypatch.setattr(tsafrir2007, "tsafrir2007_figure", lambda result: Figure())
    path = _old(tmp_path / "tsafrir2007.png")
    with pytest.raises(Interrupted):
        tsafrir2007.plot_tsafrir2007({}, path)
    _assert_untouched(path)


def test_machine_file(tmp_path, monkeypatch):
    path = _old(tmp_path / "m.toml")
    _fail_on_fsync(monkeypatch)
    with pytest.raises(Interrupted):
        write_machine(Machine("tiny", ("cores",), [[4], [4]]), path)
    _assert_untouched(path)


def test_atomic_path_keeps_the_suffix_a_writer_reads_the_format_from(tmp_path):
    with atomic_path(tmp_path / "fig.svg") as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".svg" and tmp.name.startswith(".")
        tmp.write_text("<svg/>")
    assert [p.name for p in tmp_path.iterdir()] == ["fig.svg"]


# Writes that bypass the helpers: a path opened for writing, a library writing to a
# path that is not the temporary one of atomic_path (named ``tmp``) or an open file (``fh``).
_DIRECT = re.compile(
    r"\.write_text\(|\.write_bytes\(|(?<![\w.])open\([^)]*,\s*[\"']w|"
    r"\.savefig\((?!tmp\b|fh\b)|write_table\([^,]+,\s*(?!\s|tmp\b)|model\.save\((?!tmp\b)"
)


def test_no_module_writes_a_file_in_place():
    root = Path(__file__).resolve().parents[2] / "hpcgym"
    found = []
    for path in sorted(root.rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#")[0]
            if _DIRECT.search(code) and not any(doc in code for doc in (">>>", "...", "``")):
                found.append(f"{path.relative_to(root.parent)}:{n}: {line.strip()}")
    assert found == [], "write through hpcgym.common.files (write_atomic, atomic_path):\n" + "\n".join(found)
