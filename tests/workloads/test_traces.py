"""Every development trace loads, with a load report that accounts for every job line.

The expected figures are those of the traces' README (job lines, ``MaxProcs``, jobs with
run time -1, jobs with size <= 0, traces without estimates). The traces live next to the
repository, not in it; the tests skip when they are absent.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from hpcgym.common.errors import TraceWarning
from hpcgym.workloads import DROP_NO_SUBMIT, DROP_RUNTIME, DROP_SIZE, DROP_TOO_LARGE, read_swf

# file: (job lines, machine size, where the size comes from)
README = {
    "SDSC-SP2-1998-4.2-cln.swf.gz": (59_715, 128, "MaxProcs"),
    "CTC-SP2-1996-3.1-cln.swf.gz": (77_222, 512, "Tsafrir et al. 2007 Table 1"),  # header: 338
    "HPC2N-2002-2.2-cln.swf.gz": (202_871, 240, "MaxProcs"),
    "lublin_256.swf.gz": (10_000, 256, "MaxNodes"),
    "lublin_256_new2.swf.gz": (10_000, 256, "MaxNodes"),
    "lublin-aaroh.swf.gz": (10_000, 256, "MaxNodes"),
    "CEA-Curie-2011-2.1-cln.swf.gz": (312_826, 93_312, "MaxProcs"),
    "LANL-CM5-1994-4.1-cln.swf.gz": (122_060, 1_024, "MaxProcs"),
    "LLNL-Atlas-2006-2.1-cln.swf.gz": (43_778, 9_216, "MaxProcs"),
    "LLNL-Thunder-2007-1.1-cln.swf.gz": (121_039, 4_008, "MaxProcs"),
    "NASA-iPSC-1993-3.1-cln.swf.gz": (18_239, 128, "MaxProcs"),
    "OSC-Clust-2000-3.1-cln.swf.gz": (36_097, 178, "MaxProcs"),
    "SDSC-DS-2004-2.1-cln.swf.gz": (96_069, 1_664, "MaxProcs"),
    "SDSC-Par-1996-3.1-cln.swf.gz": (32_135, 400, "MaxProcs"),
    "RICC-2010-2.swf.gz": (447_794, 8_192, "MaxProcs"),
    "METACENTRUM-2009-2.swf.gz": (103_656, None, "largest job"),  # header stripped
    "LCG.swf.gz": (188_041, 24_515, "MaxProcs"),
}
RUNTIME_MINUS_ONE = {
    "SDSC-SP2-1998-4.2-cln.swf.gz": 5_671,
    "LLNL-Thunder-2007-1.1-cln.swf.gz": 1_190,
    "SDSC-DS-2004-2.1-cln.swf.gz": 11_024,
}
SIZE_NOT_POSITIVE = {  # stated in the README; counted among jobs with run time >= 0
    "CEA-Curie-2011-2.1-cln.swf.gz": 19,
    "LLNL-Atlas-2006-2.1-cln.swf.gz": 4_571,
    "LLNL-Thunder-2007-1.1-cln.swf.gz": 2_248 - 1_190,  # the 1,190 cancelled jobs have no size either
}
NO_ESTIMATES = {
    "NASA-iPSC-1993-3.1-cln.swf.gz",
    "OSC-Clust-2000-3.1-cln.swf.gz",
    "SDSC-Par-1996-3.1-cln.swf.gz",
    "METACENTRUM-2009-2.swf.gz",
    "lublin_256.swf.gz",
    "lublin_256_new2.swf.gz",
    "lublin-aaroh.swf.gz",
}


def count_job_lines(path: Path) -> int:
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        return sum(1 for line in fh if line.strip() and not line.lstrip().startswith(";"))


@pytest.mark.filterwarnings("ignore::hpcgym.common.errors.TraceWarning")  # METACENTRUM's guessed size
@pytest.mark.parametrize("name", sorted(README))
def test_trace_loads_with_a_complete_load_report(traces_dir, name):
    path = traces_dir / name
    if not path.exists():
        pytest.skip(f"{name} is not among the development traces")
    w = read_swf(path)
    r = w.report
    job_lines, procs, source = README[name]
    assert r.job_lines == job_lines == count_job_lines(path)
    assert r.jobs_kept + r.jobs_dropped == r.job_lines
    assert len(w) == r.jobs_kept
    assert r.procs_source == source
    if procs is not None:
        assert w.procs == procs
    assert r.dropped.get(DROP_RUNTIME, 0) == RUNTIME_MINUS_ONE.get(name, 0)
    if name in SIZE_NOT_POSITIVE:  # the README states these; others may have a few too
        assert r.dropped.get(DROP_SIZE, 0) == SIZE_NOT_POSITIVE[name]
    assert r.dropped.get(DROP_NO_SUBMIT, 0) == 0
    if source == "largest job":
        assert r.dropped.get(DROP_TOO_LARGE, 0) == 0 and w.procs == w.procs_req.max()
    if name in NO_ESTIMATES:
        assert r.default_estimates == r.jobs_kept
    # what the engine relies on
    assert (w.procs_req >= 1).all() and (w.procs_req <= w.procs).all()
    assert (w.runtime >= 0).all() and (w.estimate > 0).all()
    assert (w.submit >= 0).all() and (np.diff(w.submit) >= 0).all()
    assert np.isfinite(w.raw).all()


def test_sdsc_sp2_keeps_54044_jobs(traces_dir):
    path = traces_dir / "SDSC-SP2-1998-4.2-cln.swf.gz"
    if not path.exists():
        pytest.skip("SDSC-SP2 is not among the development traces")
    r = read_swf(path).report
    assert (r.jobs_kept, dict(r.dropped)) == (54_044, {DROP_RUNTIME: 5_671})


def test_ctc_on_the_machine_of_004(traces_dir):
    # 004 Table 1 lists CTC with 512 CPUs; the header says 338. Nothing is larger than 338.
    path = traces_dir / "CTC-SP2-1996-3.1-cln.swf.gz"
    if not path.exists():
        pytest.skip("CTC-SP2 is not among the development traces")
    a, b = read_swf(path), read_swf(path, procs=338)
    assert (a.procs, a.report.procs_source) == (512, "Tsafrir et al. 2007 Table 1")
    assert "machine size 512 from Tsafrir et al. 2007 Table 1; the header says MaxProcs: 338" in str(a.report)
    assert (b.procs, b.report.procs_source, b.report.notes) == (338, "argument", ())
    assert len(a) == len(b) == 77_222


def test_metacentrum_warns_that_its_machine_size_is_a_guess(traces_dir):
    path = traces_dir / "METACENTRUM-2009-2.swf.gz"
    if not path.exists():
        pytest.skip("METACENTRUM is not among the development traces")
    with pytest.warns(TraceWarning, match=r"machine size 60 guessed from the largest job.*--procs N"):
        w = read_swf(path)
    assert w.report.procs_source == "largest job" and "warning: machine size 60" in str(w.report)


@pytest.mark.filterwarnings("ignore::hpcgym.common.errors.TraceWarning")
def test_every_file_in_the_folder_is_known_or_at_least_loads(traces_dir):
    for path in sorted(traces_dir.glob("*.swf.gz")):
        if path.name in README:
            continue  # checked above in detail
        r = read_swf(path).report
        assert r.jobs_kept + r.jobs_dropped == r.job_lines, path.name
