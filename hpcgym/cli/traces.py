"""``hpcgym traces {list,fetch}``: see HELP.

``list`` prints the trace catalogue (:mod:`hpcgym.workloads.catalogue`) and which logs are in
the trace folder; ``fetch NAME...`` downloads logs into it, keeping each only when its
content's SHA-256 matches the catalogue, and prints each file's path on stdout (what it did,
and the archive's terms, on stderr). A downloaded log is then ``--trace NAME`` of every
command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hpcgym.common.report import format_table, json_ready

HELP = "the trace catalogue: list the Parallel Workloads Archive logs, fetch one (checksum verified)"

COLUMNS = [
    ("name", "name", ""),
    ("system", "system", ""),
    ("processors", "procs", ",d"),
    ("jobs", "jobs", ",d"),
    ("span_days", "span [d]", ".1f"),
    ("cached_mark", "cached", ""),
    ("url", "url", ""),
]


def configure(p: argparse.ArgumentParser) -> None:
    actions = p.add_subparsers(dest="action", required=True, metavar="{list,fetch}")
    folder_help = (
        "the trace folder (default: $HPCGYM_TRACES, else the user's cache folder, e.g. "
        "~/.cache/hpcgym/traces on Linux)"
    )
    ls = actions.add_parser(
        "list",
        help="the catalogue: name, system, processors, jobs, span, whether downloaded, URL",
        description="The Parallel Workloads Archive logs hpcgym's papers and docs use, and whether "
        "each is in the trace folder. --json adds every field: first and last day, SHA-256 of the "
        "uncompressed content, acknowledgement, terms, notes, the log's page in the archive.",
    )
    ls.add_argument("--dir", type=Path, default=None, metavar="DIR", help=folder_help)
    ls.add_argument("--json", action="store_true", help="print JSON: the archive's terms and every log")
    fetch = actions.add_parser(
        "fetch",
        help="download logs into the trace folder, keeping each only if its SHA-256 matches",
        description="Download catalogue logs from the Parallel Workloads Archive. Each is written to a "
        "temporary file beside its destination and renamed into place only when complete and its "
        "content's SHA-256 matches the catalogue: a failed download leaves nothing behind. A log "
        "already in the folder is verified instead of downloaded. Prints each file's path; "
        "`--trace NAME` then reads it.",
    )
    fetch.add_argument("names", nargs="+", metavar="NAME", help="catalogue names (`hpcgym traces list`)")
    fetch.add_argument("--dir", type=Path, default=None, metavar="DIR", help=folder_help)
    fetch.add_argument(
        "--no-progress", action="store_true", help="no progress bar (default: one on a terminal)"
    )
    fetch.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="wait this long for the server (default 60)",
    )


def run(args: argparse.Namespace) -> int:
    return _fetch(args) if args.action == "fetch" else _list(args)


def _list(args: argparse.Namespace) -> int:
    from hpcgym.workloads import catalogue_rows, load_catalogue, trace_cache_dir

    rows = catalogue_rows(directory=args.dir)
    folder = args.dir if args.dir is not None else trace_cache_dir()
    if args.json:
        terms = load_catalogue().terms
        print(json.dumps(json_ready({"folder": str(folder), "terms": terms, "logs": rows})))
        return 0
    for row in rows:
        row["cached_mark"] = "yes" if row["cached"] else "no"
    print(format_table(rows, COLUMNS))
    print(f"\ntrace folder: {folder}")
    print("fetch one with `hpcgym traces fetch NAME`; then `--trace NAME` reads it")
    print(f"terms: {load_catalogue().terms}")
    return 0


def _fetch(args: argparse.Namespace) -> int:
    from hpcgym.workloads import fetch_trace, load_catalogue

    catalogue = load_catalogue()
    for name in args.names:
        catalogue.get(name)  # every name checked before anything is downloaded
    for name in args.names:
        done = fetch_trace(name, args.dir, progress=False if args.no_progress else None, timeout=args.timeout)
        log = done.log
        if done.downloaded_bytes:
            what = f"downloaded {done.downloaded_bytes / 2**20:.1f} MiB from {log.url}"
        else:
            what = f"already in {done.path.parent}"
        print(f"trace {log.name}: {what}; content SHA-256 verified", file=sys.stderr)
        print(f"  acknowledge: {log.acknowledge}" + (f"; {log.terms}" if log.terms else ""), file=sys.stderr)
        print(done.path)
    print(f"terms: {catalogue.terms}", file=sys.stderr)
    return 0


__all__ = ["HELP", "configure", "run"]
