"""``hpcgym predictors``: the runtime predictors and 004's predictor space."""

from __future__ import annotations

import argparse
import json

from hpcgym.cli._common import (
    configure_json,
)

HELP = "list the runtime predictors (--space: 004's predictor space)"


def configure(p: argparse.ArgumentParser) -> None:
    configure_json(p)
    p.add_argument(
        "--space",
        action="store_true",
        help="print 004 section 7's 8,640 user-history configurations, one name a line",
    )
    p.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help="print N distinct configurations of the space, drawn",
    )
    p.add_argument("--seed", type=int, default=0, help="the --sample draw's seed (default 0)")


def run(args: argparse.Namespace) -> int:
    from hpcgym.predict import predictor_aliases, predictor_names, predictor_space, sample_predictor_space

    if args.space or args.sample is not None:
        configs = (
            list(predictor_space()) if args.sample is None else sample_predictor_space(args.sample, args.seed)
        )
        if args.json:
            print(json.dumps([str(c) for c in configs]))
        else:
            print("\n".join(str(c) for c in configs))
        return 0
    names = predictor_names()
    aliases: dict[str, list[str]] = {}
    for alias, target in predictor_aliases().items():
        aliases.setdefault(target, []).append(alias.upper() if len(alias) == 1 else alias)
    if args.json:
        print(json.dumps({n: {"description": d, "aliases": aliases.get(n, [])} for n, d in names.items()}))
        return 0
    width = max(map(len, names))
    for name, desc in names.items():
        alias = f" (alias: {', '.join(aliases[name])})" if name in aliases else ""
        print(f"{name.ljust(width)}  {desc}{alias}")
    return 0
