"""``hpcgym policies``: the dispatcher presets and what each combines."""

from __future__ import annotations

import argparse
import json
import textwrap

from hpcgym.cli._common import (
    EXTRA_RULE_HELP,
    configure_json,
)

HELP = "list the dispatcher presets and what each combines"


configure = configure_json


def run(args: argparse.Namespace) -> int:
    from hpcgym.baselines import POLICIES, easy_extra, policy_specs

    specs = policy_specs()
    extra = {name: easy_extra(name) for name in specs}
    aliases: dict[str, list[str]] = {}
    for alias, target in POLICIES.aliases().items():
        aliases.setdefault(target, []).append(alias)
    if args.json:
        print(
            json.dumps(
                {
                    n: {
                        "predictor": s.predictor,
                        "description": s.description,
                        "aliases": aliases.get(n, []),
                        **s.combines,
                        "extra processors": extra[n],
                    }
                    for n, s in specs.items()
                }
            )
        )
        return 0
    width = max(map(len, specs))
    for name, spec in specs.items():
        alias = f" (alias: {', '.join(aliases[name])})" if name in aliases else ""
        print(f"{name.ljust(width)}  {spec.description}{alias}")
        parts = [f"predictor={spec.predictor}"] + [
            f"{k}={v}" for k, v in spec.combines.items() if k != "predictor"
        ]
        if extra[name] is not None:
            parts.append(f"extra processors={extra[name]}")
        print(f"{''.ljust(width)}    {', '.join(parts)}")
    print("\nextra processors (EASY-family presets; `simulate` and `compare` take --extra classic|all):")
    for rule, text in EXTRA_RULE_HELP.items():
        print(textwrap.fill(text, 100, initial_indent=f"  {rule:<9}", subsequent_indent=" " * 11))
    return 0
