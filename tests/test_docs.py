"""Every command and Python example of README.md and docs/*.md runs, from the repository root.

How the docs mark their examples (the runner relies on it, and the checks at the end
keep the docs to it):

* A fenced block says what it holds: ```` ```sh ```` commands, ```` ```python ```` a
  script, ```` ```text ```` anything that is not run (layouts, output). A bare ```` ``` ````
  is an error, so no command can hide in a block the runner skips.
* In a ``sh`` block every line is a command (a trailing ``# comment`` is allowed):
  ``hpcgym ...`` and ``python ...`` lines run, in order, in one working directory;
  ``make TARGET`` lines are not run here (they install a virtual environment) but the
  target must exist in the Makefile.
* A ``python`` block runs on its own as a script.
* ``<!-- docs-test: expensive -->`` on the line before a block: it takes long (a training
  run, a benchmark) and runs only under ``pytest -m expensive`` (``make bench``).

Examples run from a copy of the repository root (the package linked, not copied), so
commands that write files (``--plot cmp.png``) write into a temporary folder.
``hpcgym`` commands run through ``hpcgym.cli.main`` in the test's process (training,
sweeps and ``--model`` evaluations in a fresh interpreter); ``python`` lines and blocks in
a fresh interpreter.
``../shared/traces`` there points at the development traces; an example that needs one
that is absent is skipped, saying which (likewise one that needs a missing optional
extra). The trace folder of the catalogue (``HPCGYM_TRACES``) is the development traces,
which hold the archive's logs under their own names, so ``hpcgym traces fetch NAME`` only
verifies them and ``--trace NAME`` reads them, without a network; without them it is an
empty folder, and an example that fetches is skipped. Output changes as the code grows: the
runner asserts only that each example exits with 0 and prints no traceback.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TRACES = ROOT.parent / "shared" / "traces"
"""The development traces, where ``../shared/traces/...`` in the docs points."""

LANGUAGES = ("sh", "python", "text")
EXPENSIVE = "<!-- docs-test: expensive -->"
RUNNABLE = ("hpcgym", "python")
TRACE_PATH = re.compile(r"\.\./shared/traces/[\w.+-]+")
# A fence may be indented (a block inside a list item); its closing fence has the same indent.
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M
)
# Not copied into the working folder (the package is linked instead).
NOT_COPIED = {
    ".git",
    ".venv",
    "hpcgym",
    "results",
    "runs",
    "build",
    ".pytest_cache",
    ".hypothesis",
    ".mypy_cache",
}


@dataclass(frozen=True)
class Block:
    """One fenced block of a Markdown file."""

    doc: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    expensive: bool

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    """The fenced blocks of ``doc``, in order."""
    source = doc.read_text()
    out = []
    for m in FENCE.finditer(source):
        line = source.count("\n", 0, m.start()) + 1
        before = source[: m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        body = textwrap.dedent(m.group("body"))
        out.append(Block(doc, line, m.group("lang").strip(), body, before == EXPENSIVE))
    return out


ALL_BLOCKS = [b for doc in DOCS for b in blocks(doc)]


def commands(block: Block) -> list[list[str]]:
    """The lines of a ``sh`` block as argument lists, comments removed."""
    return [argv for line in block.text.splitlines() if (argv := shlex.split(line, comments=True))]


def runnable(block: Block) -> bool:
    if block.language == "python":
        return True
    return block.language == "sh" and any(argv[0] in RUNNABLE for argv in commands(block))


def _params() -> list[object]:
    """One test per runnable block; a block repeated verbatim (README and ENV.md) runs once."""
    seen: set[tuple[str, str]] = set()
    params = []
    for b in ALL_BLOCKS:
        if runnable(b) and (b.language, b.text) not in seen:
            seen.add((b.language, b.text))
            params.append(pytest.param(b, id=b.id, marks=[pytest.mark.expensive] if b.expensive else []))
    return params


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A copy of the repository root (the package linked), with ``../shared/traces`` beside it."""
    work = tmp_path / "repo"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name in NOT_COPIED or entry.name.startswith(".venv") or entry.name.endswith(".egg-info"):
            continue
        if entry.is_dir():
            shutil.copytree(entry, work / entry.name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(entry, work / entry.name)
    # the package itself, linked (not copied) so a path such as ``hpcgym/workloads/data/...`` works
    (work / "hpcgym").symlink_to(ROOT / "hpcgym", target_is_directory=True)
    if TRACES.is_dir():
        (tmp_path / "shared").mkdir()
        (tmp_path / "shared" / "traces").symlink_to(TRACES, target_is_directory=True)
    return work


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["MPLBACKEND"] = "Agg"
    env.setdefault("OMP_NUM_THREADS", "1")  # torch beside the other test workers: no oversubscription
    return env


def _skip_unless_traces_present(text: str) -> None:
    missing = sorted({p for p in TRACE_PATH.findall(text) if not (ROOT / p).is_file()})
    if missing:
        pytest.skip(f"needs the development trace(s) {', '.join(missing)}, absent here")


OPTIONAL_MODULES = {
    "stable_baselines3": "extra rl",
    "sb3_contrib": "extra rl",
    "torch": "extra rl",
    "matplotlib": "extra plot",
    "ortools": "extra cp",
    "ray.rllib": "pip install 'ray[rllib]'",
}
"""Modules of hpcgym's optional extras: an example importing a missing one is skipped."""


def _importable(module: str) -> bool:
    if "." not in module:
        return importlib.util.find_spec(module) is not None
    try:  # a subpackage may be shipped without what it needs (Ray ships RLlib's code)
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def _skip_unless_extras_installed(source: str) -> None:
    missing = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        for name in names:
            for module, extra in OPTIONAL_MODULES.items():
                if (name == module or name.startswith(module + ".")) and not _importable(module):
                    missing.add(f"{module} ({extra})")
    if missing:
        pytest.skip(f"needs {', '.join(sorted(missing))}, not installed")


def _check(result: subprocess.CompletedProcess[str], what: str) -> None:
    shown = (
        f"{what}\n--- stdout (end) ---\n{result.stdout[-3000:]}\n"
        f"--- stderr (end) ---\n{result.stderr[-3000:]}"
    )
    assert result.returncode == 0, f"exit code {result.returncode}: {shown}"
    assert "Traceback (most recent call last)" not in result.stderr + result.stdout, f"traceback: {shown}"


@pytest.mark.parametrize("block", _params())
def test_example_runs(block: Block, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _skip_unless_traces_present(block.text)
    if "hpcgym traces fetch" in block.text and not TRACES.is_dir():
        pytest.skip("`hpcgym traces fetch` needs the network, or the development traces as HPCGYM_TRACES")
    env = _environment()
    env["HPCGYM_TRACES"] = str(TRACES if TRACES.is_dir() else workdir.parent / "trace-folder")
    if block.language == "python":
        _skip_unless_extras_installed(block.text)
        script = workdir.parent / "example.py"
        script.write_text(block.text)
        result = subprocess.run(
            [sys.executable, str(script)], cwd=workdir, env=env, capture_output=True, text=True
        )
        _check(result, f"{block.id}: python block")
        return
    runs = [argv for argv in commands(block) if argv[0] in RUNNABLE]
    for argv in runs:  # skip before running anything, not halfway through a block
        if argv[:2] == ["hpcgym", "train"] or (argv[:2] == ["hpcgym", "evaluate"] and "--model" in argv):
            _skip_unless_extras_installed("import sb3_contrib")
        if "--plot" in argv or argv[:2] == ["hpcgym", "plot"]:
            _skip_unless_extras_installed("import matplotlib")
    for argv in runs:
        if _in_process(argv):
            result = _run_in_process(argv, workdir, monkeypatch, env)
        else:
            program = [sys.executable, "-m", "hpcgym"] if argv[0] == "hpcgym" else [sys.executable]
            full = [*program, *argv[1:]]
            result = subprocess.run(full, cwd=workdir, env=env, capture_output=True, text=True)
        _check(result, f"{block.id}: {shlex.join(argv)}")


# Commands that run in a fresh interpreter all the same: training (torch's threads beside
# the other test worker), sweeps (process pools, Ray's global state).
OWN_PROCESS = {"train", "sweep"}


def _in_process(argv: list[str]) -> bool:
    """Whether an ``hpcgym`` command of the docs runs in this process (``hpcgym.cli.main``).

    A fresh interpreter per command would spend most of a short example importing hpcgym
    and loading its compiled kernels; the entry point is the same function either way.
    """
    return argv[0] == "hpcgym" and argv[1] not in OWN_PROCESS and "--model" not in argv


def _run_in_process(
    argv: list[str], workdir: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """``hpcgym argv[1:]`` through :func:`hpcgym.cli.main` in ``workdir``: its exit code and output.

    An exception main() does not turn into an exit code propagates and fails the test with
    its traceback, as a traceback in a subprocess's output would.
    """
    from hpcgym.cli import main

    monkeypatch.chdir(workdir)
    for name in ("MPLBACKEND", "HPCGYM_TRACES"):  # what _environment() sets for a subprocess
        monkeypatch.setenv(name, env[name])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv[1:])
        except SystemExit as exc:  # argparse's usage errors and --help
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


# The conventions above, checked, so an example cannot silently drop out of the runner.


def test_every_block_says_what_it_holds() -> None:
    bad = [f"{b.id} ({b.language or 'no language'})" for b in ALL_BLOCKS if b.language not in LANGUAGES]
    assert not bad, f"fenced blocks must be one of {LANGUAGES}: {bad}"


def test_every_line_of_a_sh_block_is_a_command_the_runner_knows() -> None:
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), flags=re.M))
    bad = []
    for b in ALL_BLOCKS:
        if b.language != "sh":
            continue
        for argv in commands(b):
            if argv[0] in RUNNABLE:
                continue
            if argv[0] == "make" and len(argv) == 2 and argv[1] in targets:
                continue
            bad.append(f"{b.id}: {shlex.join(argv)}")
    assert not bad, f"lines the runner would not run: {bad}"


def test_expensive_marker_stands_only_before_blocks() -> None:
    for doc in DOCS:
        lines = doc.read_text().splitlines()
        for i, line in enumerate(lines):
            if line.strip().startswith("<!-- docs-test"):
                assert line.strip() == EXPENSIVE, f"{doc.name}:{i + 1}: unknown marker {line.strip()!r}"
                assert i + 1 < len(lines) and lines[i + 1].lstrip().startswith("```"), (
                    f"{doc.name}:{i + 1}: the marker must stand on the line before a fenced block"
                )


def test_trace_paths_are_the_bundled_trace_or_the_development_traces() -> None:
    """A trace path in an example either exists in the repository or is ``../shared/traces/NAME``;
    a catalogue name is fetched earlier in the same block."""
    from hpcgym.workloads import load_catalogue

    catalogue = load_catalogue()
    bad = []
    for b in ALL_BLOCKS:
        if b.language != "sh":
            continue
        fetched: set[str] = set()
        for argv in commands(b):
            if argv[:3] == ["hpcgym", "traces", "fetch"]:
                fetched.update(a for a in argv[3:] if not a.startswith("-"))
            for flag, value in itertools.pairwise(argv):
                if flag != "--trace" or TRACE_PATH.fullmatch(value) or (ROOT / value).is_file():
                    continue
                if catalogue.find(value) is None or value not in fetched:
                    bad.append(f"{b.id}: --trace {value}")
    assert not bad, bad


def test_the_runner_finds_the_examples() -> None:
    """The parser sees the examples the docs are known to hold (guards against a broken regex)."""
    readme = [b for b in ALL_BLOCKS if b.doc.name == "README.md"]
    assert {b.language for b in readme} == set(LANGUAGES)
    assert any("def smallest_first" in b.text for b in readme if b.language == "python")
    assert any(
        argv[:2] == ["hpcgym", "simulate"] for b in readme if b.language == "sh" for argv in commands(b)
    )
    assert any(b.expensive for b in ALL_BLOCKS)
    assert len(_params()) >= 10


def test_every_figure_has_the_command_that_made_it() -> None:
    """Each image a doc shows is written by a ``--plot`` command (or ``hpcgym plot -o``) in the same doc."""
    for doc in DOCS:
        text = doc.read_text()
        plotted = {
            Path(argv[i + 1]).name
            for b in blocks(doc)
            if b.language == "sh"
            for argv in commands(b)
            for i in range(len(argv) - 1)
            if argv[i] == "--plot" or (argv[:2] == ["hpcgym", "plot"] and argv[i] in ("-o", "--output"))
        }
        # `hpcgym study ... -o DIR`, `hpcgym evaluate ... --out DIR`, `hpcgym sweep --preset
        # tsafrir-params -o DIR` and `hpcgym reproduce hariharan -o DIR` write their figures into
        # DIR (shown as .../DIR/NAME.png)
        from hpcgym.experiments.evaluate import FIGURES as FIGURES_EVALUATE
        from hpcgym.experiments.paramstudy import FIGURES as FIGURES_PARAMS
        from hpcgym.studies.galleguillos2017 import FIGURES
        from hpcgym.studies.galleguillos2019 import FIGURES as FIGURES_2019
        from hpcgym.studies.hariharan import FIGURES as FIGURES_003

        def figures_of(argv: list[str]) -> tuple[str, ...]:
            if "study" in argv:
                return (*FIGURES, *FIGURES_2019)
            if "reproduce" in argv and "hariharan" in argv:
                return FIGURES_003
            if "evaluate" in argv:
                return FIGURES_EVALUATE
            return FIGURES_PARAMS if "sweep" in argv and "tsafrir-params" in argv else ()

        plotted |= {
            f"{Path(argv[i + 1]).name}/{stem}.png"
            for b in blocks(doc)
            if b.language == "sh"
            for argv in commands(b)
            for i in range(len(argv) - 1)
            if argv[i] in ("-o", "--out")
            for stem in figures_of(argv)
        }
        for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
            shown = {Path(image).name, "/".join(Path(image).parts[-2:])}
            assert shown & plotted, f"{doc.name}: no command beside the figure {image}"


def test_readme_training_example_is_the_one_in_env_docs() -> None:
    def training(doc: str) -> list[str]:
        return [b.text for b in ALL_BLOCKS if b.doc.name == doc and "MaskablePPO(" in b.text]

    readme, env_doc = training("README.md"), training("ENV.md")
    assert readme and env_doc
    assert readme[0] == env_doc[0]
    assert len(readme[0].strip().splitlines()) <= 10


def test_readme_quickstart_has_exactly_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    quick = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    first = next(b for b in blocks(ROOT / "README.md") if b.text and b.text in quick)
    assert [shlex.join(argv) for argv in commands(first)] == ["make demo", "make test"]


# ``--help`` is documentation too: its defaults are the ones the code applies.


def _tiny_trace(procs: int) -> str:
    jobs = [
        f"{i + 1} {60 * i} -1 {300 + 97 * (i % 7)} {1 + i % 16} -1 -1 {1 + i % 16} {900} -1 1 {1 + i % 3} "
        "1 -1 -1 -1 -1 -1"
        for i in range(60)
    ]
    return f"; MaxProcs: {procs}\n" + "\n".join(jobs) + "\n"


def test_reproduce_help_states_the_machine_sizes_the_code_applies(tmp_path, write_swf_text, capsys) -> None:
    from hpcgym.cli import main
    from hpcgym.workloads import KNOWN_MACHINES

    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for key, (cpus, _) in KNOWN_MACHINES.items():
        assert f"{key} {cpus}" in help_text
    assert "else the header's MaxProcs" in help_text
    assert "(tsafrir2007: one, required;" in help_text
    # what the help says: a file named like CTC-SP2 runs on the paper's 512 CPUs, another on its header's
    for name, procs in (("CTC-SP2-tiny.swf", 512), ("elsewhere-tiny.swf", 338)):
        trace = write_swf_text(tmp_path / name, _tiny_trace(338))
        assert main(["reproduce", "tsafrir2007", "--trace", str(trace), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["procs"] == procs
    assert main(["reproduce", "tsafrir2007"]) == 2  # --trace is required, as the help says
    assert "--trace" in capsys.readouterr().err
