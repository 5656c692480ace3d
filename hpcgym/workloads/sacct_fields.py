"""The cells of a Slurm accounting log (``sacct --parsable2``), one kind of field at a time.

Each function reads one cell as ``sacct`` prints it and returns its value, or raises
``ValueError`` with a message that says what the cell should look like; the reader
(:mod:`hpcgym.workloads.sacct`) adds the file, the line and the column. What ``sacct``
prints is described in its manual page (``man sacct``, "Job Accounting Fields" and "Job
State Codes"); where the manual is silent, the rule chosen is said here.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import zoneinfo
from dataclasses import dataclass

UNKNOWN_TIMES = ("unknown", "none", "n/a", "")
"""What ``sacct`` prints for a time that is not set (a pending job's Start, a running job's
End), lower case."""

NO_LIMIT = "UNLIMITED"
PARTITION_LIMIT = "Partition_Limit"
"""The two Timelimit values that are not durations: no limit at all, and the partition's."""

STATES = (
    "BOOT_FAIL",
    "CANCELLED",
    "COMPLETED",
    "DEADLINE",
    "FAILED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PENDING",
    "PREEMPTED",
    "RUNNING",
    "REQUEUED",
    "RESIZING",
    "REVOKED",
    "SUSPENDED",
    "TIMEOUT",
)
"""The job state codes of ``man sacct``; ``CANCELLED by UID`` reads as ``CANCELLED``."""

SWF_STATUS = {
    "COMPLETED": 1,
    "CANCELLED": 5,
    "FAILED": 0,
    "TIMEOUT": 0,
    "NODE_FAIL": 0,
    "OUT_OF_MEMORY": 0,
    "BOOT_FAIL": 0,
    "DEADLINE": 0,
    "PREEMPTED": 0,
    "REQUEUED": 0,
}
"""A finished job's state as SWF's status (field 11: 1 completed, 0 failed, 5 cancelled);
chosen: every way of ending early that is not a cancellation counts as failed. Other
states: -1 (unknown)."""

_MEMORY_UNITS = {"": 1.0, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2, "P": 1024.0**3}
"""Memory units of Slurm in MB (its base unit; powers of 1024)."""

_NUMBER = r"[0-9]+(?:\.[0-9]*)?"
_MEMORY_RE = re.compile(rf"({_NUMBER})([KMGTP]?)([nc]?)", re.IGNORECASE)
_JOB_ID_RE = re.compile(
    r"(?P<job>[0-9]+)"
    r"(?:_(?P<task>[0-9]+)|_\[(?P<tasks>[^\]]*)\]|\+(?P<het>[0-9]+))?"
    r"(?:\.(?P<step>[A-Za-z0-9_-]+))?"
)
_WHOLE_RE = re.compile(r"[0-9]+")
_LARGEST = 2**53
"""Counts, sizes and durations must be below this (as a job table's numbers are): they then
convert to int64 and float64 exactly, and a value of 10^20 is an error naming its cell."""
_EPOCH_RE = re.compile(r"[0-9]{9,}")
_OFFSET_RE = re.compile(r"([+-][0-9]{2})([0-9]{2})$")


# ------------------------------------------------------------------ durations
def parse_duration(text: str, *, bare_minutes: bool = False) -> float:
    """A Slurm duration in seconds: ``D-HH:MM:SS``, ``HH:MM:SS``, ``MM:SS`` (and ``D-HH``, ``D-HH:MM``).

    These are the forms Slurm reads and prints (``sacct`` prints Elapsed and Timelimit as
    ``[D-]HH:MM:SS``, CPU times as ``MM:SS.mmm``); a fraction of a second is allowed. A
    bare number is minutes, as in Slurm's own ``--time``, only where ``bare_minutes`` is
    set (Timelimit); elsewhere it is an error, since a count of seconds looks the same.
    Minutes and seconds after hours must be below 60, hours after days below 24.

    Raises:
        ValueError: anything else; the message shows the accepted forms.

    >>> parse_duration("1-02:03:04"), parse_duration("02:03:04"), parse_duration("03:04")
    (93784.0, 7384.0, 184.0)
    >>> parse_duration("2-12"), parse_duration("30", bare_minutes=True)
    (216000.0, 1800.0)
    """
    s = text.strip()
    accepted = "a duration D-HH:MM:SS, HH:MM:SS or MM:SS"
    days = 0
    rest = s
    if "-" in s:
        d, _, rest = s.partition("-")
        if not _WHOLE_RE.fullmatch(d):
            raise ValueError(f"{text!r} is not {accepted}")
        days = int(d)
    parts = rest.split(":")
    if not rest or len(parts) > 3:
        raise ValueError(f"{text!r} is not {accepted}")
    *whole, last = parts
    if not all(_WHOLE_RE.fullmatch(p) for p in whole) or not re.fullmatch(_NUMBER, last):
        raise ValueError(f"{text!r} is not {accepted}")
    if "." in last and (days and len(parts) < 3):
        raise ValueError(f"{text!r} is not {accepted}")
    values = [int(p) for p in whole] + [float(last)]
    if days >= _LARGEST or any(v >= _LARGEST for v in values):
        raise ValueError(f"{text!r} is too large: {accepted} below 2**53 s")
    if days or "-" in s:
        # D-H, D-H:M, D-H:M:S
        h, m, sec = [*values, 0.0, 0.0][:3]
        fields = {"hours": h, "minutes": m, "seconds": sec}
        limits = {"hours": 24, "minutes": 60, "seconds": 60}
    elif len(values) == 3:
        h, m, sec = values
        fields = {"minutes": m, "seconds": sec}
        limits = {"minutes": 60, "seconds": 60}
    elif len(values) == 2:
        h, (m, sec) = 0, values
        fields, limits = {"seconds": sec}, {"seconds": 60}
    else:
        if not bare_minutes:
            raise ValueError(f"{text!r} is not {accepted} (a bare number would be ambiguous)")
        return float(values[0]) * 60.0
    for name, value in fields.items():
        if value >= limits[name]:
            raise ValueError(f"{text!r} is not {accepted}: {name} {value:g} must be below {limits[name]}")
    total = float(days * 86400 + h * 3600 + m * 60 + sec)
    if total >= _LARGEST:
        raise ValueError(f"{text!r} is too large: {accepted} below 2**53 s")
    return total


def parse_limit(text: str) -> float | str | None:
    """A Timelimit cell: seconds, :data:`NO_LIMIT`, :data:`PARTITION_LIMIT`, or None (blank).

    >>> parse_limit("04:00:00"), parse_limit("UNLIMITED"), parse_limit("Partition_Limit"), parse_limit("")
    (14400.0, 'UNLIMITED', 'Partition_Limit', None)
    """
    s = text.strip()
    if not s:
        return None
    for word in (NO_LIMIT, PARTITION_LIMIT):
        if s.lower() == word.lower():
            return word
    seconds = parse_duration(s, bare_minutes=True)
    if seconds <= 0:
        raise ValueError(f"{text!r} is not a time limit: it must be > 0 (or UNLIMITED, Partition_Limit)")
    return seconds


# ------------------------------------------------------------------ times
def parse_zone(name: str) -> dt.tzinfo:
    """The time zone ``name`` (an IANA name such as ``Europe/Berlin``, or ``UTC``).

    Raises:
        ValueError: no such zone in the time zone database.
    """
    s = name.strip()
    if s.upper() in ("UTC", "Z", "GMT"):
        return dt.timezone.utc
    try:
        return zoneinfo.ZoneInfo(s)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as err:
        raise ValueError(
            f"{name!r} is not a time zone of the tz database (e.g. UTC, Europe/Berlin, America/Chicago): "
            f"{err}"
        ) from None


@dataclass(frozen=True)
class Instant:
    """A time read from the log, as seconds since the Unix epoch.

    A local time that the clocks passed twice (the hour repeated when daylight saving
    time ends) has two readings: ``first`` (the earlier) and ``second``; any other time
    has ``first == second``.
    """

    first: float
    second: float

    @property
    def ambiguous(self) -> bool:
        """Whether the local time was passed twice (a repeated hour)."""
        return self.second != self.first


def parse_time(text: str, zone: dt.tzinfo) -> Instant | None:
    """A Submit, Start or End cell: None if not set (``Unknown``, ``None``, blank), else the instant.

    ``sacct`` prints local times without a zone (``2024-03-31T01:30:00``); they are read in
    ``zone``. A time with an offset (``SLURM_TIME_FORMAT="%FT%T%z"``) or in seconds since
    the epoch (``SLURM_TIME_FORMAT=%s``) is an instant already and ``zone`` does not apply.

    Raises:
        ValueError: not a date-time, or a local time that does not exist in ``zone``
            (the hour skipped when daylight saving time starts: the zone is wrong).

    >>> berlin = parse_zone("Europe/Berlin")
    >>> parse_time("2024-01-01T01:00:00", berlin)
    Instant(first=1704067200.0, second=1704067200.0)
    >>> parse_time("2024-10-27T02:30:00", berlin).ambiguous, parse_time("Unknown", berlin)
    (True, None)
    """
    s = text.strip()
    if s.lower() in UNKNOWN_TIMES:
        return None
    if _EPOCH_RE.fullmatch(s):
        return Instant(float(s), float(s))
    iso = _OFFSET_RE.sub(r"\1:\2", s[:-1] + "+00:00" if s.endswith("Z") else s)  # Python 3.10 wants +01:00
    try:
        stamp = dt.datetime.fromisoformat(iso)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a time: sacct prints YYYY-MM-DDTHH:MM:SS (or Unknown, None)"
        ) from None
    if stamp.tzinfo is not None:
        return Instant(stamp.timestamp(), stamp.timestamp())
    first = stamp.replace(tzinfo=zone, fold=0).timestamp()
    second = stamp.replace(tzinfo=zone, fold=1).timestamp()
    if first > second:  # zoneinfo reads a skipped local time with the offsets before and after
        raise ValueError(
            f"{text!r} does not exist in time zone {zone}: the clocks skipped it when daylight "
            "saving time began; is the zone right (--timezone)?"
        )
    return Instant(first, second)


# ------------------------------------------------------------------ amounts
def parse_count(text: str) -> int | None:
    """A whole count (NNodes, NCPUS): None if blank.

    >>> parse_count("16"), parse_count("")
    (16, None)
    """
    s = text.strip()
    if not s:
        return None
    if not _WHOLE_RE.fullmatch(s):
        raise ValueError(f"{text!r} is not a whole number")
    if int(s) >= _LARGEST:
        raise ValueError(f"{text!r} is too large (at most 2**53)")
    return int(s)


def parse_memory(text: str) -> tuple[float, str]:
    """A memory size in MB and how it counts: ``("n")`` per node, ``("c")`` per CPU, ``""`` not said.

    Slurm's units are powers of 1024 with MB as the base (no unit: MB): ``4000Mc`` is
    4000 MB per CPU, ``16Gn`` 16 GB per node (``ReqMem`` before Slurm 21.08), ``16G`` 16 GB
    (``ReqMem`` since 21.08, and ``mem=`` of a TRES list).

    Raises:
        ValueError: not a size of that form.

    >>> parse_memory("4000Mc"), parse_memory("16Gn"), parse_memory("1.5T"), parse_memory("512K")
    ((4000.0, 'c'), (16384.0, 'n'), (1572864.0, ''), (0.5, ''))
    """
    m = _MEMORY_RE.fullmatch(text.strip())
    if not m:
        raise ValueError(
            f"{text!r} is not a memory size (a number with unit K, M, G or T, and n per node or c per CPU: "
            "4000Mc, 16Gn, 16G)"
        )
    mb = float(m.group(1)) * _MEMORY_UNITS[m.group(2).upper()]
    if not mb < _LARGEST:
        raise ValueError(f"{text!r} is too large (at most 2**53 MB)")
    return mb, m.group(3).lower()


def parse_tres(text: str) -> dict[str, str]:
    """A TRES list (``billing=4,cpu=4,gres/gpu=2,mem=16G,node=1``) as ``{name: value}``; ``{}`` if blank.

    Raises:
        ValueError: an entry that is not ``name=value``, or a name given twice.

    >>> parse_tres("cpu=4,mem=16G,node=1,gres/gpu:a100=2")
    {'cpu': '4', 'mem': '16G', 'node': '1', 'gres/gpu:a100': '2'}
    """
    out: dict[str, str] = {}
    s = text.strip()
    if not s:
        return out
    for entry in s.split(","):
        name, sep, value = entry.partition("=")
        name, value = name.strip().lower(), value.strip()
        if not sep or not name or not value:
            raise ValueError(f"{entry!r} of {text!r} is not name=value (a TRES list: cpu=4,mem=16G,node=1)")
        if name in out:
            raise ValueError(f"{name} appears twice in {text!r}")
        out[name] = value
    return out


def tres_amounts(tres: dict[str, str]) -> dict[str, float]:
    """The amounts of a TRES list hpcgym uses: ``cpu``, ``node``, ``mem`` (MB) and ``gpu``.

    GPUs: ``gres/gpu`` if listed, else the sum of the typed ``gres/gpu:TYPE`` entries
    (Slurm lists both when it tracks the types; adding them would count GPUs twice).
    Other TRES (billing, energy, licenses, ...) are ignored.

    Raises:
        ValueError: an amount that is not a whole number (a size, for ``mem``).

    >>> tres_amounts(parse_tres("billing=8,cpu=8,gres/gpu:a100=1,gres/gpu:v100=2,mem=3G,node=2"))
    {'cpu': 8.0, 'node': 2.0, 'mem': 3072.0, 'gpu': 3.0}
    """
    out: dict[str, float] = {}
    for key in ("cpu", "node"):
        if key in tres:
            out[key] = float(_whole(tres[key], key))
    if "mem" in tres:
        mb, per = parse_memory(tres["mem"])
        if per:
            raise ValueError(f"mem={tres['mem']} of a TRES list has no per-node or per-CPU suffix")
        out["mem"] = mb
    if "gres/gpu" in tres:
        out["gpu"] = float(_whole(tres["gres/gpu"], "gres/gpu"))
    else:
        typed = [k for k in tres if k.startswith("gres/gpu:")]
        if typed:
            out["gpu"] = float(sum(_whole(tres[k], k) for k in typed))
    return out


def _whole(value: str, name: str) -> int:
    if not _WHOLE_RE.fullmatch(value.strip()):
        raise ValueError(f"{name}={value!r} is not a whole number")
    if int(value) >= _LARGEST:
        raise ValueError(f"{name}={value!r} is too large (at most 2**53)")
    return int(value)


# ------------------------------------------------------------------ job ids and states
@dataclass(frozen=True)
class JobId:
    """A JobID cell taken apart.

    Attributes:
        job: the job's number (an array's or a heterogeneous job's own number).
        task: an array task's index (``123_4``), else None.
        pending_tasks: how many tasks a pending array row stands for (``123_[5-9]``: 5),
            else None.
        component: a heterogeneous job's component (``123+1``), else None.
        step: a step's name (``123.batch``, ``123.extern``, ``123.0``), else None.
    """

    job: int
    task: int | None = None
    pending_tasks: int | None = None
    component: int | None = None
    step: str | None = None


def parse_job_id(text: str) -> JobId:
    """A JobID cell: ``123``, ``123_4``, ``123_[5-9,12%2]``, ``123+1``, each with an optional ``.step``.

    Raises:
        ValueError: not of that form.

    >>> parse_job_id("123_[5-9,12%2]").pending_tasks, parse_job_id("123+1.batch").step
    (6, 'batch')
    """
    s = text.strip()
    m = _JOB_ID_RE.fullmatch(s)
    if not m:
        raise ValueError(
            f"{text!r} is not a Slurm job id (123, 123_4, 123_[5-9], 123+0, with an optional .step)"
        )
    pending = None
    if m.group("tasks") is not None:
        pending = _count_tasks(m.group("tasks"), text)
    return JobId(
        job=int(m.group("job")),
        task=int(m.group("task")) if m.group("task") is not None else None,
        pending_tasks=pending,
        component=int(m.group("het")) if m.group("het") is not None else None,
        step=m.group("step"),
    )


def _count_tasks(spec: str, text: str) -> int:
    """How many indices an array range such as ``5-9,12,20-30:5%4`` names (``%N`` is a throttle)."""
    body = spec.split("%", 1)[0]
    count = 0
    for part in body.split(","):
        m = re.fullmatch(r"([0-9]+)(?:-([0-9]+)(?::([0-9]+))?)?", part.strip())
        if not m:
            raise ValueError(f"{text!r}: the array range {spec!r} is not of the form 5-9,12,20-30:5%4")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        step = int(m.group(3)) if m.group(3) is not None else 1
        if hi < lo or step < 1:
            raise ValueError(f"{text!r}: the array range {part!r} is empty")
        count += (hi - lo) // step + 1
    return count


def parse_state(text: str) -> str:
    """A State cell as one of :data:`STATES` (``CANCELLED by 1234`` is ``CANCELLED``).

    Raises:
        ValueError: no such state.

    >>> parse_state("CANCELLED by 1234"), parse_state("completed")
    ('CANCELLED', 'COMPLETED')
    """
    words = text.strip().split()
    state = words[0].upper().rstrip("+") if words else ""
    if state not in STATES:
        raise ValueError(f"{text!r} is not a Slurm job state ({', '.join(STATES)})")
    return state


def ceil_div(total: float, parts: int) -> int:
    """``ceil(total / parts)`` as a whole number (a job's amount per node)."""
    return math.ceil(total / parts - 1e-9)
