"""Command line: ``hpcgym <command>``, one module of this package per command.

Each command module has ``HELP`` (one line), ``configure(parser)`` (its arguments) and
``run(args) -> exit status``; it parses, calls the library and prints. :data:`COMMANDS`
lists them in the order ``hpcgym --help`` shows. Options several commands share (the
trace arguments, reading a trace) are in :mod:`hpcgym.cli._common`.

Errors: every failure hpcgym anticipates raises an :class:`~hpcgym.common.errors.HpcGymError`
naming the file and line or the parameter and what it accepts; :func:`main` prints it as
``hpcgym: error: ...`` (no traceback) and exits with status 2, as argparse does for its
own usage errors. Unreadable files (``OSError``) are reported the same way. Anything else
is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from hpcgym import __version__
from hpcgym.common.errors import HpcGymError

COMMANDS: tuple[str, ...] = (
    "simulate",
    "policies",
    "predictors",
    "machines",
    "demo",
    "convert",
    "compare",
    "waitpred",
    "mold",
    "reproduce",
    "generate",
    "study",
    "evaluate",
    "train",
    "sweep",
    "predict-eval",
    "traces",
    "plot",
)
"""The commands, each the module ``hpcgym.cli.<name>`` (``-`` as ``_``), in ``--help`` order."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="hpcgym", description="HPC job-dispatch simulator, baselines and Gymnasium environment"
    )
    parser.add_argument("--version", action="version", version=f"hpcgym {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        module = importlib.import_module(f"hpcgym.cli.{name.replace('-', '_')}")
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.configure(p)
        p.set_defaults(handler=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``hpcgym`` command: 0 on success, 2 on a usage or input error."""
    parser = build_parser()
    args = parser.parse_args(argv)  # exits 2 on argparse's own usage errors
    try:
        return int(args.handler(args))
    except HpcGymError as err:  # bad input: the message names the file/line or the parameter
        print(f"hpcgym: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # stdout closed early (``hpcgym ... | head``): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush does not fail too
        return 1
    except OSError as err:  # missing or unreadable files (FileNotFoundError, IsADirectoryError, ...)
        print(f"hpcgym: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hpcgym: interrupted", file=sys.stderr)
        return 130
    finally:  # the compilation notice a command turned on stays with that command
        compile_notice = sys.modules.get("hpcgym.baselines._compile")
        if compile_notice is not None:
            compile_notice.announce_compilation(False)
