"""Writing a machine as the TOML file :meth:`Machine.from_file` reads back.

Python reads TOML (``tomllib``) but does not write it; a machine file is a handful of
keys, so :func:`machine_toml` writes it directly, in the layout of the presets
(``hpcgym/machine/presets/eurora.toml``): the top-level keys, one ``[[nodes]]`` table per
run of identical nodes, one ``[queues.NAME]`` table per queue, with comments where the
caller has something to say. :func:`write_machine` writes it atomically.

>>> m = Machine("tiny", ("cores", "mem_gb"), [[4, 8], [4, 8]], queues={"q": (3600, 0)})
>>> print(machine_toml(m))
name = "tiny"
description = ""
resources = ["cores", "mem_gb"]
exclusive = false
allocation = "first-fit"
<BLANKLINE>
[[nodes]]
count = 2
cores = 4
mem_gb = 8
<BLANKLINE>
[queues.q]
max_walltime_s = 3600  # 1 h
ewt_s = 0
<BLANKLINE>
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hpcgym.common.files import write_atomic
from hpcgym.machine.model import Machine

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def machine_toml(
    machine: Machine,
    *,
    comments: Sequence[str] = (),
    node_comments: Sequence[str] = (),
    queue_comments: Mapping[str, str] | None = None,
) -> str:
    """The TOML text of ``machine``; :meth:`Machine.from_dict` of its parse is an equal machine.

    Args:
        machine: the machine.
        comments: lines written as ``# ...`` at the top.
        node_comments: one line per node type of :meth:`Machine.to_dict` (a run of
            identical nodes of the same groups), written above its ``[[nodes]]`` table.
        queue_comments: a comment after a queue's ``max_walltime_s``, by queue name
            (default: the wall-time in hours or minutes).
    """
    d = machine.to_dict()
    out: list[str] = [f"# {line}".rstrip() for line in comments]
    if out:
        out.append("")
    out += [
        f"name = {_string(d['name'])}",
        f"description = {_string(d['description'])}",
        f"resources = [{', '.join(_string(r) for r in d['resources'])}]",
        f"exclusive = {'true' if d['exclusive'] else 'false'}",
        f"allocation = {_string(d['allocation'])}",
    ]
    for k, spec in enumerate(d["nodes"]):
        out.append("")
        if k < len(node_comments) and node_comments[k]:
            out.append(f"# {node_comments[k]}")
        out.append("[[nodes]]")
        for key, value in spec.items():
            if key == "group" and len(value) == 1:
                value = value[0]  # one group: a name, as the presets write it
            out.append(f"{_key(key)} = {_value(value)}")
    notes = dict(queue_comments or {})
    for q, spec in d["queues"].items():
        wall = spec["max_walltime_s"]
        note = notes.get(q, _duration(wall))
        out += [
            "",
            f"[queues.{_key(q)}]",
            f"max_walltime_s = {_value(wall)}" + (f"  # {note}" if note else ""),
            f"ewt_s = {_value(spec['ewt_s'])}",
        ]
    return "\n".join(out) + "\n"


def write_machine(
    machine: Machine,
    path: str | os.PathLike[str],
    *,
    comments: Sequence[str] = (),
    node_comments: Sequence[str] = (),
    queue_comments: Mapping[str, str] | None = None,
) -> None:
    """Write :func:`machine_toml` to ``path`` atomically (a temporary file renamed into place)."""
    text = machine_toml(
        machine, comments=comments, node_comments=node_comments, queue_comments=queue_comments
    )
    write_atomic(path, text.encode("utf-8"))


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return ""
    if seconds >= 86400 and seconds % 3600 == 0:
        return f"{seconds / 3600:g} h ({seconds / 86400:g} days)"
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds / 60:g} min"


def _string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; DEL must be escaped too)."""
    return json.dumps(str(text), ensure_ascii=False).replace("\x7f", "\\u007f")


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return str(int(value)) if value == math.floor(value) and abs(value) < 2**53 else repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return f"[{', '.join(_value(v) for v in value)}]"
    raise TypeError(f"no TOML form for {value!r}")  # pragma: no cover - to_dict holds no other types
