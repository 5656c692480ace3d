"""``hpcgym machines``: the machine presets; ``hpcgym machines from-slurm``: a machine file from Slurm."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hpcgym.cli._common import (
    configure_json,
)

HELP = "list the machine presets: nodes, resources, groups and queues"

SINFO_FORMAT = "%N %c %m %G %P"
"""The ``sinfo`` format ``from-slurm`` reads (:data:`hpcgym.machine.SINFO_FORMAT`; not imported here
so that ``hpcgym --help`` does not load numba)."""


def configure(p: argparse.ArgumentParser) -> None:
    configure_json(p)
    p.usage = "%(prog)s [-h] [--json] [from-slurm ...]"
    actions = p.add_subparsers(dest="action", metavar="ACTION", title="actions (none: list the presets)")
    slurm = actions.add_parser(
        "from-slurm",
        prog=f"{p.prog} from-slurm",
        help="write a machine file from Slurm's node listing (and its partitions)",
        description="write a machine TOML file from `scontrol show nodes --oneliner` or "
        f'`sinfo -N -h -o "{SINFO_FORMAT}"` output: node groups of identical CPUs, '
        "memory and GRES, the partitions as queues (see docs/MACHINES.md)",
    )
    slurm.add_argument(
        "nodes", type=Path, help="the node listing (scontrol show nodes --oneliner, or sinfo -N)"
    )
    slurm.add_argument(
        "--partitions",
        type=Path,
        default=None,
        metavar="FILE",
        help="`scontrol show partition --oneliner` output: each partition's MaxTime becomes its queue's "
        "maximum wall-time (default: none known, see --unlimited)",
    )
    slurm.add_argument("-o", "--output", type=Path, required=True, help="the machine file to write (.toml)")
    slurm.add_argument("--name", default=None, help="the machine's name (default: the output file's name)")
    slurm.add_argument(
        "--unlimited",
        type=float,
        default=None,
        metavar="SECONDS",
        help="maximum wall-time of queues whose MaxTime is UNLIMITED or unknown (default: the longest "
        "limit of the other partitions, else a year)",
    )


def run(args: argparse.Namespace) -> int:
    if getattr(args, "action", None) == "from-slurm":
        return _from_slurm(args)
    from hpcgym.machine import MACHINES, make_machine

    if args.json:
        print(json.dumps({n: make_machine(n).to_dict() for n in MACHINES}))
        return 0
    for name in MACHINES:
        print(make_machine(name).describe())
    print("\nor a TOML file of the same form (`hpcgym simulate --machine my-machine.toml`)")
    return 0


def _from_slurm(args: argparse.Namespace) -> int:
    from hpcgym.common.errors import InvalidConfigError
    from hpcgym.machine import slurm_machine_file

    if args.output.suffix.lower() != ".toml":
        raise InvalidConfigError(f"-o {args.output}: a machine file ends in .toml")
    built = slurm_machine_file(
        args.nodes, args.output, partitions=args.partitions, name=args.name, unlimited_s=args.unlimited
    )
    for note in built.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        print(json.dumps(built.machine.to_dict()))
    else:
        print(built.machine.describe())
        print(f"\nwrote {args.output} (`hpcgym simulate --machine {args.output} ...`)")
    return 0
