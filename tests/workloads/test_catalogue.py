"""The trace catalogue: fetching from a local HTTP server, every failure a clear error that
leaves nothing behind, catalogue names as ``--trace``, and the shipped catalogue itself.

A ``http.server`` on 127.0.0.1 in a thread serves a small gzipped SWF under several folders,
each misbehaving in one way (wrong content, a body shorter than its Content-Length, a gzip
stream cut short, a 404, an HTML page); a closed port stands for no network. The trace folder
is a temporary one in every test (``HPCGYM_TRACES``), never the user's cache.
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import json
import socket
import threading
from collections import Counter
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import TRACES_DIR

import hpcgym.workloads as workloads_face
from hpcgym.cli import main
from hpcgym.common.download import ContentError, ContentHash, content_sha256
from hpcgym.common.errors import DownloadError, InvalidConfigError, MissingTraceError, UnknownNameError
from hpcgym.workloads import catalogue as catalogue_module
from hpcgym.workloads import read_swf
from hpcgym.workloads.catalogue import (
    Catalogue,
    CatalogueLog,
    fetch_trace,
    load_catalogue,
    resolve_trace,
    trace_cache_dir,
)

NAME = "TINY-2024-1.1-cln"
FILE = f"{NAME}.swf.gz"
SWF = (
    "; Version: 2.2\n; MaxProcs: 8\n"
    + "".join(
        f"{i} {10 * i} -1 {60 + i} 2 -1 -1 2 120 -1 1 {1 + i % 2} 1 -1 1 1 -1 -1\n" for i in range(1, 21)
    )
).encode()
GZ = gzip.compress(SWF, mtime=0)
SHA = hashlib.sha256(SWF).hexdigest()
OTHER = gzip.compress(SWF.replace(b"MaxProcs: 8", b"MaxProcs: 9"), mtime=0)


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves ``/FOLDER/FILE``; the folder says how to misbehave."""

    hits: ClassVar[Counter[str]] = Counter()

    def do_GET(self) -> None:
        folder = self.path.strip("/").split("/")[0]
        _Handler.hits[folder] += 1
        if folder == "missing":
            self.send_error(404, "Not Found")
            return
        body = {"ok": GZ, "changed": OTHER, "html": b"<!DOCTYPE html><p>log in first</p>"}.get(folder, GZ)
        self.send_response(200)
        if folder == "cut-gzip":  # no length, the gzip stream stops halfway
            self.end_headers()
            self.wfile.write(GZ[: len(GZ) // 2])
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[: len(body) // 2] if folder == "short" else body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def trace_folder(tmp_path, monkeypatch) -> Path:
    """A fresh trace folder for every test, so no test reads or writes the user's cache."""
    folder = tmp_path / "traces"
    monkeypatch.setenv("HPCGYM_TRACES", str(folder))
    return folder


def tiny_catalogue(archive: str, folder: str = "ok") -> Catalogue:
    log = CatalogueLog(
        name=NAME,
        folder=folder,
        file=FILE,
        system="a test machine",
        processors=8,
        nodes=8,
        jobs=20,
        span_days=0.0,
        first_day="2024-01-01",
        last_day="2024-01-01",
        sha256=SHA,
        content_bytes=len(SWF),
        acknowledge="nobody",
        archive=archive,
    )
    return Catalogue(archive=archive, terms="cite the test", logs=(log,))


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_fetch_downloads_verifies_and_then_reuses_the_file(server, trace_folder):
    cat = tiny_catalogue(server)
    before = _Handler.hits["ok"]
    done = fetch_trace(NAME, catalogue=cat, progress=False)
    assert done.path == trace_folder / FILE
    assert done.path.read_bytes() == GZ and done.downloaded_bytes == len(GZ)
    assert leftovers(trace_folder) == [FILE]  # no temporary file left
    again = fetch_trace(NAME.lower() + ".swf.gz", catalogue=cat, progress=False)
    assert (again.path, again.downloaded_bytes) == (done.path, 0)
    assert _Handler.hits["ok"] == before + 1  # the second fetch verified the file, no download


@pytest.mark.parametrize(
    ("folder", "cause"),
    [
        ("changed", f"has SHA-256 {hashlib.sha256(gzip.decompress(OTHER)).hexdigest()}, expected {SHA}"),
        ("short", f"the body ended after {len(GZ) // 2:,} of {len(GZ):,} bytes"),
        ("cut-gzip", "the gzip stream ends early"),
        ("missing", "HTTP 404"),
        ("html", "not a gzip file: it starts with b'<!DOCTYPE html>"),
    ],
)
def test_a_bad_download_is_an_error_naming_the_trace_and_leaves_nothing(server, trace_folder, folder, cause):
    cat = tiny_catalogue(server, folder)
    with pytest.raises(DownloadError, match=f"trace {NAME}") as err:
        fetch_trace(NAME, catalogue=cat, progress=False)
    assert cause in str(err.value)
    assert f"{server}{folder}/{FILE}" in str(err.value)
    assert leftovers(trace_folder) == []
    with pytest.raises(MissingTraceError, match=f"hpcgym traces fetch {NAME}"):
        resolve_trace(NAME, catalogue=cat)  # a later run trusts nothing


def test_no_network_is_a_clear_error(trace_folder):
    with socket.socket() as s:  # a port nothing listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cat = tiny_catalogue(f"http://127.0.0.1:{port}/")
    with pytest.raises(DownloadError, match=f"trace {NAME}: cannot reach .*connection refused"):
        fetch_trace(NAME, catalogue=cat, progress=False, timeout=2)
    assert leftovers(trace_folder) == []


def test_a_file_already_there_that_does_not_match_is_reported_and_left_alone(server, trace_folder):
    trace_folder.mkdir()
    (trace_folder / FILE).write_bytes(OTHER)
    with pytest.raises(DownloadError, match=r"does not match the catalogue.*delete it and fetch again"):
        fetch_trace(NAME, catalogue=tiny_catalogue(server), progress=False)
    assert (trace_folder / FILE).read_bytes() == OTHER


def test_a_progress_bar_only_on_a_terminal_or_when_asked(server, tmp_path, capsys):
    fetch_trace(NAME, tmp_path / "a", catalogue=tiny_catalogue(server))  # stderr is no terminal here
    assert capsys.readouterr().err == ""
    fetch_trace(NAME, tmp_path / "b", catalogue=tiny_catalogue(server), progress=True)
    assert f"trace {NAME}" in capsys.readouterr().err


def test_fetch_into_another_folder(server, tmp_path, trace_folder):
    done = fetch_trace(NAME, tmp_path / "elsewhere", catalogue=tiny_catalogue(server), progress=False)
    assert done.path == tmp_path / "elsewhere" / FILE and done.path.is_file()
    assert leftovers(trace_folder) == []


def test_resolving_a_trace_argument(server, tmp_path, trace_folder, monkeypatch):
    cat = tiny_catalogue(server)
    with pytest.raises(MissingTraceError, match=f"no {FILE} in {trace_folder}.*hpcgym traces fetch {NAME}"):
        resolve_trace(NAME, catalogue=cat)
    fetch_trace(NAME, catalogue=cat, progress=False)
    assert resolve_trace(NAME, catalogue=cat) == trace_folder / FILE
    assert resolve_trace(FILE.upper(), catalogue=cat) == trace_folder / FILE
    monkeypatch.chdir(tmp_path)  # an existing path wins over the catalogue name
    Path(NAME).write_bytes(b"")
    assert resolve_trace(NAME, catalogue=cat) == Path(NAME)
    assert resolve_trace("sub/missing.swf", catalogue=cat) == Path("sub/missing.swf")
    with pytest.raises(MissingTraceError, match=f"no file 'TINY-2024'.*did you mean {NAME}"):
        resolve_trace("TINY-2024", catalogue=cat)
    assert resolve_trace("unrelated", catalogue=cat) == Path("unrelated")


def test_read_swf_reads_a_catalogue_name(server, trace_folder, monkeypatch):
    monkeypatch.setattr(catalogue_module, "load_catalogue", lambda: tiny_catalogue(server))
    fetch_trace(NAME, progress=False)
    w = read_swf(NAME)
    assert (w.name, len(w), w.procs) == (NAME, 20, 8)


def test_cli_fetch_then_simulate_with_the_name(server, trace_folder, monkeypatch, capsys):
    cat = tiny_catalogue(server)
    monkeypatch.setattr(catalogue_module, "load_catalogue", lambda: cat)
    monkeypatch.setattr(workloads_face, "load_catalogue", lambda: cat)
    assert main(["simulate", "--trace", NAME, "--no-progress"]) == 2
    assert f"hpcgym traces fetch {NAME}" in capsys.readouterr().err
    assert main(["traces", "fetch", NAME, "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{trace_folder / FILE}\n"
    assert "content SHA-256 verified" in err and "terms: cite the test" in err
    assert main(["simulate", "--trace", NAME, "--policy", "fcfs", "--json", "--no-progress"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["trace"], row["jobs_read"], row["procs"]) == (NAME, 20, 8)


def test_cli_fetch_failure_and_unknown_name(server, monkeypatch, capsys):
    cat = tiny_catalogue(server, "missing")
    monkeypatch.setattr(catalogue_module, "load_catalogue", lambda: cat)
    monkeypatch.setattr(workloads_face, "load_catalogue", lambda: cat)
    assert main(["traces", "fetch", NAME, "--no-progress"]) == 2
    assert f"hpcgym: error: trace {NAME}: {server}missing/{FILE}: HTTP 404" in capsys.readouterr().err
    assert main(["traces", "fetch", "TINY-2024", "--no-progress"]) == 2
    assert f"did you mean {NAME}?" in capsys.readouterr().err


def test_cli_list_shows_the_catalogue_and_what_is_cached(trace_folder, capsys):
    trace_folder.mkdir()
    (trace_folder / "SDSC-SP2-1998-4.2-cln.swf.gz").write_bytes(b"")  # presence is what list shows
    assert main(["traces", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    logs = {log["name"]: log for log in data["logs"]}
    assert logs["SDSC-SP2-1998-4.2-cln"]["cached"] == str(trace_folder / "SDSC-SP2-1998-4.2-cln.swf.gz")
    assert logs["CTC-SP2-1996-3.1-cln"]["cached"] is None
    assert data["folder"] == str(trace_folder) and "Parallel Workloads Archive" in data["terms"]
    assert main(["traces", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    sp2 = next(line for line in lines if line.startswith("SDSC-SP2-1998-4.2-cln"))
    assert "59,715" in sp2 and " yes " in sp2 and sp2.endswith("l_sdsc_sp2/SDSC-SP2-1998-4.2-cln.swf.gz")


def test_the_shipped_catalogue():
    cat = load_catalogue()
    assert {"SDSC-SP2-1998-4.2-cln", "CTC-SP2-1996-3.1-cln", "HPC2N-2002-2.2-cln"} <= set(cat.names)
    assert cat.archive == "https://www.cs.huji.ac.il/labs/parallel/workload/"
    for log in cat.logs:
        assert log.url == f"{cat.archive}{log.folder}/{log.name}.swf.gz"
        assert log.folder.startswith("l_") and log.acknowledge and log.used_by
        assert log.first_day <= log.last_day


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"sha256": "abc"}, "sha256 must be 64 lower-case hex digits"),
        ({"jobs": "many"}, "jobs must be an integer"),
        ({"file": "other.swf.gz"}, "name must be a plain name and file the archive's NAME.swf.gz"),
        ({"colour": "red"}, "unknown key"),
    ],
)
def test_a_malformed_catalogue_entry_is_an_error_naming_it(change, message):
    entry = {k: v for k, v in load_catalogue().logs[0].to_dict().items() if k not in ("url", "page")}
    data = {"archive": "https://example.org/", "terms": "t", "log": [{**entry, **change}]}
    with pytest.raises(InvalidConfigError, match=f"test.toml: log SDSC-SP2-1998-4.2-cln: {message}"):
        Catalogue.from_mapping(data, "test.toml")
    with pytest.raises(InvalidConfigError, match="the name appears twice"):
        Catalogue.from_mapping({**data, "log": [entry, entry]}, "test.toml")
    with pytest.raises(UnknownNameError, match="known: SDSC-SP2"):
        load_catalogue().get("nothing-like-it")


def test_trace_folder_rule():
    assert trace_cache_dir({"HPCGYM_TRACES": "~/t", "HOME": "/h"}) == Path("~/t").expanduser()
    relative_xdg = {"HOME": "/h", "XDG_CACHE_HOME": "rel"}  # not absolute: ignored, as the XDG spec says
    assert trace_cache_dir(relative_xdg, "linux") == Path("/h/.cache/hpcgym/traces")
    assert trace_cache_dir({"HOME": "/h"}, "darwin") == Path("/h/Library/Caches/hpcgym/traces")
    assert trace_cache_dir({"HOME": "/h", "LOCALAPPDATA": "/l"}, "win32") == Path("/l/hpcgym/Cache/traces")


def test_content_hash_of_several_gzip_members_and_of_a_cut_stream():
    two = gzip.compress(b"a" * 1000) + gzip.compress(b"b" * 10)
    h = ContentHash(gunzip=True)
    for i in range(0, len(two), 7):
        h.feed(two[i : i + 7])
    assert h.finish() == (hashlib.sha256(b"a" * 1000 + b"b" * 10).hexdigest(), 1010)
    cut = ContentHash(gunzip=True)
    cut.feed(two[:-3])
    with pytest.raises(ContentError, match="ends early"):
        cut.finish()
    plain = ContentHash(gunzip=False)
    plain.feed(b"xyz")
    assert plain.finish() == (hashlib.sha256(b"xyz").hexdigest(), 3)


@pytest.mark.expensive
@pytest.mark.skipif(not TRACES_DIR.is_dir(), reason="the development traces are absent")
def test_the_catalogue_figures_are_those_of_the_development_traces():
    """Every log's checksum, content length, job lines and header figures, recomputed."""
    checked = 0
    for log in load_catalogue().logs:
        path = TRACES_DIR / log.file
        if not path.is_file():
            continue
        assert content_sha256(path, gunzip=True) == (log.sha256, log.content_bytes), log.name
        text = gzip.decompress(path.read_bytes()).decode()
        jobs = [line.split() for line in text.splitlines() if line.strip() and not line.startswith(";")]
        submits = [float(job[1]) for job in jobs]
        assert len(jobs) == log.jobs, log.name
        assert round((max(submits) - min(submits)) / 86400, 1) == log.span_days, log.name
        assert f"; MaxProcs: {log.processors}" in text and f"; MaxNodes: {log.nodes}" in text, log.name
        checked += 1
    assert checked == len(load_catalogue().logs)


def test_evaluate_reads_the_catalogue_log_when_the_models_recorded_trace_is_absent(tmp_path):
    from hpcgym.cli.evaluate import _here_or_catalogue

    absent = "../nowhere/shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz"
    assert _here_or_catalogue(absent) == "SDSC-SP2-1998-4.2-cln"
    here = tmp_path / "SDSC-SP2-1998-4.2-cln.swf.gz"
    here.write_bytes(b"")
    assert _here_or_catalogue(str(here)) == str(here)
    assert _here_or_catalogue("../nowhere/mine.swf") == "../nowhere/mine.swf"


def test_plot_reads_the_trace_by_its_catalogue_name(server, trace_folder, monkeypatch, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    cat = tiny_catalogue(server)
    monkeypatch.setattr(catalogue_module, "load_catalogue", lambda: cat)
    monkeypatch.setattr(workloads_face, "load_catalogue", lambda: cat)
    fetched = fetch_trace(NAME, progress=False).path
    schedule, picture = tmp_path / "fcfs.csv", tmp_path / "fcfs.png"
    simulate = ["simulate", "--trace", NAME, "--policy", "fcfs", "--schedule-out", str(schedule)]
    assert main([*simulate, "--no-progress"]) == 0
    capsys.readouterr()
    plot = ["plot", str(schedule), "--trace", NAME, "-o", str(picture), "--dpi", "30"]
    assert main(plot) == 0  # the name is the fetched file: its users and its 8 processors
    err = capsys.readouterr().err
    assert f"wrote {picture}" in err and "no users" not in err and "machine size not given" not in err
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    picture.unlink()
    fetched.unlink()  # not downloaded: the error says how to get it, and nothing is written
    assert main(plot) == 2
    assert f"hpcgym traces fetch {NAME}" in capsys.readouterr().err and not picture.exists()
