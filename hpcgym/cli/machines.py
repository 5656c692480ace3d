"""``hpcgym machines``: the machine presets."""

from __future__ import annotations

import argparse
import json

from hpcgym.cli._common import (
    configure_json,
)

HELP = "list the machine presets: nodes, resources, groups and queues"


configure = configure_json


def run(args: argparse.Namespace) -> int:
    from hpcgym.machine import MACHINES, make_machine

    if args.json:
        print(json.dumps({n: make_machine(n).to_dict() for n in MACHINES}))
        return 0
    for name in MACHINES:
        print(make_machine(name).describe())
    print("\nor a TOML file of the same form (`hpcgym simulate --machine my-machine.toml`)")
    return 0
