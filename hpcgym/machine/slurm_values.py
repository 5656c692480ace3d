"""Slurm's ways of writing values: time limits, GRES, and compressed node lists.

Used by :mod:`hpcgym.machine.slurm` (node and partition listings); they follow Slurm's
own parsers (``sbatch --time``, ``slurm.conf`` ``Gres=``, hostlists).

>>> parse_slurm_time("1-12:00:00"), parse_slurm_time("30:00"), parse_slurm_time("UNLIMITED")
(129600.0, 1800.0, None)
>>> parse_gres("gpu:tesla:2(S:0-1),gpu:a100:2,nvme:1")
{'gpu': 4, 'nvme': 1}
>>> expand_hostlist("cn[001-003,010],gpu1")
['cn001', 'cn002', 'cn003', 'cn010', 'gpu1']
>>> compress_hostlist(["cn001", "cn002", "cn003", "cn010", "gpu1"])
'cn[001-003,010],gpu1'
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

_UNLIMITED = ("UNLIMITED", "INFINITE")
_SUFFIX = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_TIME_RE = re.compile(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?")
_COUNT_RE = re.compile(r"(\d+)([KMGT]?)", re.IGNORECASE)
_GRES_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_WHOLE_RE = re.compile(r"\d+")


def parse_slurm_time(text: str) -> float | None:
    """A Slurm time limit in seconds; None for ``UNLIMITED`` (or ``INFINITE``).

    Slurm's forms (``sbatch --time``): ``minutes``, ``minutes:seconds``,
    ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes`` and
    ``days-hours:minutes:seconds``; ``scontrol`` prints ``HH:MM:SS`` or ``D-HH:MM:SS``.

    Raises:
        ValueError: none of these forms.

    >>> parse_slurm_time("2-00"), parse_slurm_time("02:00:00"), parse_slurm_time("90")
    (172800.0, 7200.0, 5400.0)
    """
    s = text.strip()
    if s.upper() in _UNLIMITED:
        return None
    m = _TIME_RE.fullmatch(s)
    if not m:
        raise ValueError(f"{text!r} is not a Slurm time ([days-]hours:minutes:seconds, minutes or UNLIMITED)")
    days, first, second, third = (int(g) if g is not None else None for g in m.groups())
    a = first or 0  # the pattern always holds it
    if days is not None:
        hours, minutes, seconds = a, second or 0, third or 0
    elif third is not None:
        hours, minutes, seconds = a, second or 0, third
    elif second is not None:
        hours, minutes, seconds = 0, a, second
    else:
        hours, minutes, seconds = 0, a, 0
    return float((((days or 0) * 24 + hours) * 60 + minutes) * 60 + seconds)


def parse_gres(text: str) -> dict[str, int]:
    """A node's GRES (``gpu:4``, ``gpu:tesla:2(S:0-1)``, ``(null)``) as ``{name: count}``.

    Each comma-separated item is ``name[:type][:no_consume]:count[K|M|G|T]`` with an
    optional ``(...)`` binding after it; counts of one name are summed over its types.

    Raises:
        ValueError: an item of another form; the message names it.
    """
    s = text.strip()
    if s.lower() in ("", "(null)", "none", "n/a"):
        return {}
    out: dict[str, int] = {}
    for item in _split_outside_parentheses(s):
        spec = re.sub(r"\([^()]*\)$", "", item.strip())
        parts = [p for p in spec.split(":") if p.lower() != "no_consume"]
        name = parts[0] if parts else ""
        if not _GRES_NAME_RE.fullmatch(name):
            raise ValueError(f"{item!r} is not a GRES (name[:type]:count, e.g. gpu:tesla:2)")
        m = _COUNT_RE.fullmatch(parts[-1]) if len(parts) > 1 else None
        if m is None:
            raise ValueError(f"{item!r} has no count (name[:type]:count, e.g. gpu:tesla:2)")
        key = name.lower()
        out[key] = out.get(key, 0) + int(m.group(1)) * _SUFFIX[m.group(2).upper()]
    return dict(sorted(out.items()))


def _split_outside_parentheses(text: str) -> list[str]:
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return items


def expand_hostlist(text: str, limit: int | None = None) -> list[str]:
    """Slurm's compressed node list (``cn[001-003,010],gpu1``) as node names.

    Args:
        text: the compressed list.
        limit: the most names it may expand to (None: no limit); checked as the names
            are made, so ``cn[0-99999999999]`` fails at once instead of filling memory.

    Raises:
        ValueError: an unbalanced bracket, a range that is not ``low-high``, or more
            than ``limit`` names.
    """
    items = _split_outside_brackets(text.strip())
    if limit is not None and sum(_count_one(item) for item in items) > limit:
        raise ValueError(f"{text.strip()[:80]!r} names more than {limit:,} nodes")
    names: list[str] = []
    for item in items:
        names.extend(_expand_one(item))
    return names


def _count_one(item: str) -> int:
    """How many names :func:`_expand_one` makes of ``item``, without making them."""
    m = re.match(r"([^\[]*)\[([^\]]*)\](.*)", item)
    if m is None:
        return 1
    total = 0
    for part in m.group(2).split(","):
        low, sep, high = part.partition("-")
        if _WHOLE_RE.fullmatch(low) and (not sep or _WHOLE_RE.fullmatch(high)):
            total += max(int(high) - int(low) + 1, 0) if sep else 1
    return total * _count_one(m.group(3))


def _split_outside_brackets(text: str) -> list[str]:
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "["
        depth -= ch == "]"
        if depth < 0:
            raise ValueError(f"{text!r}: ']' without '['")
        if ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth:
        raise ValueError(f"{text!r}: '[' without ']'")
    items.append(text[start:])
    return [item for item in items if item]


def _expand_one(item: str) -> Iterator[str]:
    m = re.match(r"([^\[]*)\[([^\]]*)\](.*)", item)
    if m is None:
        yield item
        return
    head, ranges, tail = m.groups()
    for part in ranges.split(","):
        low, sep, high = part.partition("-")
        if not _WHOLE_RE.fullmatch(low) or (sep and not _WHOLE_RE.fullmatch(high)):
            raise ValueError(f"{item!r}: {part!r} is not a number or a range low-high")
        stop = int(high) if sep else int(low)
        if stop < int(low):
            raise ValueError(f"{item!r}: the range {part!r} runs backwards")
        width = len(low)
        for k in range(int(low), stop + 1):
            for rest in _expand_one(tail):
                yield f"{head}{k:0{width}d}{rest}"


def compress_hostlist(names: Sequence[str]) -> str:
    """Node names as a compressed list: runs of numbers with one prefix and width in brackets."""
    runs: dict[tuple[str, int], list[int]] = {}
    items: list[str | tuple[str, int]] = []  # a name without a number, or a run's key
    for name in names:
        m = re.fullmatch(r"(.*?)(\d+)", name)
        if m is None:
            items.append(name)
            continue
        key = (m.group(1), len(m.group(2)))
        if key not in runs:
            runs[key] = []
            items.append(key)
        runs[key].append(int(m.group(2)))
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
            continue
        prefix, width = item
        values = sorted(set(runs[item]))
        if len(values) == 1:
            out.append(f"{prefix}{values[0]:0{width}d}")
            continue
        spans: list[str] = []
        lo = prev = values[0]
        for v in [*values[1:], None]:
            if v is not None and v == prev + 1:
                prev = v
                continue
            spans.append(f"{lo:0{width}d}" if lo == prev else f"{lo:0{width}d}-{prev:0{width}d}")
            if v is not None:
                lo = prev = v
        out.append(f"{prefix}[{','.join(spans)}]")
    return ",".join(out)
