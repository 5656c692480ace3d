"""The trace catalogue: Parallel Workloads Archive logs by name, downloaded once and verified.

The catalogue (``catalogue.toml`` beside this module, data rather than code) lists the
archive's logs that hpcgym's papers, docs, shipped models and golden schedules use: for each
its system, processors, jobs, span, the archive's terms and the log's acknowledgement, its URL
in the archive, and the SHA-256 of its uncompressed content. Only logs whose content could be
checksummed are listed; nothing is listed on trust.

:func:`fetch_trace` downloads a log into the trace folder (:func:`trace_cache_dir`) with
:func:`hpcgym.common.download.download_verified`: it is kept only when its content's
SHA-256 matches, and written atomically, so a file in the folder under a log's name got there
verified (or was put there by hand). :func:`resolve_trace` turns a catalogue name into that
file: :func:`~hpcgym.workloads.read_swf` calls it, so a catalogue name is accepted wherever an
SWF path is (``--trace NAME`` of every command, sweep specs, ``DispatchEnv(trace=NAME)``).

The rule for a trace argument, decided here (the issue leaves it open):

1. a path that exists is that file, whatever its name;
2. otherwise a catalogue name (``SDSC-SP2-1998-4.2-cln``, or its file name
   ``SDSC-SP2-1998-4.2-cln.swf.gz``; letter case ignored) is the log's file in the trace folder
   if it is there, else :class:`~hpcgym.common.errors.MissingTraceError` saying
   ``hpcgym traces fetch NAME``. Nothing is downloaded implicitly: runs never touch the
   network, and a missing trace is one clear error rather than a surprise download;
3. otherwise the path as given (the reader then reports the missing file), except that a
   bare name close to a catalogue name is an error suggesting it.

The trace folder is ``$HPCGYM_TRACES`` when set, else the user's cache folder, as
``platformdirs.user_cache_dir("hpcgym")`` would place it (written out here, to need no
extra dependency): ``$XDG_CACHE_HOME/hpcgym/traces`` (default ``~/.cache/hpcgym/traces``)
on Linux and other Unix systems, ``~/Library/Caches/hpcgym/traces`` on macOS and
``%LOCALAPPDATA%\\hpcgym\\Cache\\traces`` on Windows. The development traces folder holds the
archive's files under their own names, so ``HPCGYM_TRACES=../shared/traces`` makes those
copies the cache (``hpcgym traces fetch`` then only verifies them).
"""

from __future__ import annotations

import difflib
import functools
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from hpcgym.common.download import ContentError, content_sha256, download_verified
from hpcgym.common.errors import DownloadError, InvalidConfigError, MissingTraceError, UnknownNameError
from hpcgym.common.files import read_toml_or_yaml

ENV_TRACES = "HPCGYM_TRACES"
"""The environment variable naming the trace folder (the cache by default)."""
CATALOGUE_FILE = "catalogue.toml"
"""The catalogue's file, in this package."""
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass(frozen=True)
class CatalogueLog:
    """One log of the catalogue (``[[log]]`` of ``catalogue.toml``)."""

    name: str
    """the log's name in the archive, its file name without ``.swf.gz`` (``SDSC-SP2-1998-4.2-cln``)"""
    folder: str
    """its folder in the archive (``l_sdsc_sp2``)"""
    file: str
    """its file name in the archive, and in the trace folder (``SDSC-SP2-1998-4.2-cln.swf.gz``)"""
    system: str
    """the machine and site that logged it"""
    processors: int
    """the header's ``MaxProcs``"""
    nodes: int
    """the header's ``MaxNodes``"""
    jobs: int
    """job lines in the file"""
    span_days: float
    """days from the first to the last submit"""
    first_day: str
    """the header's ``StartTime``, as a date (ISO 8601)"""
    last_day: str
    """the header's ``EndTime``, as a date"""
    sha256: str
    """hex SHA-256 of the uncompressed content"""
    content_bytes: int
    """length of the uncompressed content"""
    acknowledge: str
    """who provided the log (the header's ``Acknowledge`` line), to acknowledge in publications"""
    archive: str
    """the archive's base URL (the catalogue's ``archive``)"""
    terms: str = ""
    """conditions of this log beyond the archive's (SDSC's JOBLOG data usage agreement)"""
    note: str = ""
    """what to know before using it (machine size the papers use, missing fields)"""
    used_by: tuple[str, ...] = ()
    """the papers, docs, models and checks of hpcgym that use it"""

    @property
    def url(self) -> str:
        """The log's file in the archive."""
        return f"{self.archive}{self.folder}/{self.file}"

    @property
    def page(self) -> str:
        """The log's page in the archive: description, acknowledgement, versions, usage notes."""
        return f"{self.archive}{self.folder}/index.html"

    def to_dict(self) -> dict[str, Any]:
        """The log's fields and its ``url`` and ``page``, JSON-ready."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "archive"}
        out["used_by"] = list(self.used_by)
        return {**out, "url": self.url, "page": self.page}


@dataclass(frozen=True)
class Catalogue:
    """The logs of a catalogue file, and the terms of the archive they come from."""

    archive: str
    """the archive's base URL, ending in ``/``"""
    terms: str
    """the archive's terms of use, as a sentence"""
    logs: tuple[CatalogueLog, ...]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str) -> Catalogue:
        """A catalogue from parsed TOML (``archive``, ``terms``, ``[[log]]`` tables).

        Raises:
            InvalidConfigError: a key is missing, unknown or of the wrong kind, a name repeats,
                a checksum is not 64 hex digits; the message names ``source`` and the log.
        """
        _only_keys(data, {"archive", "terms", "log"}, source)
        archive = _text(data, "archive", source)
        if not archive.startswith(("https://", "http://")) or not archive.endswith("/"):
            raise InvalidConfigError(
                f"{source}: archive must be an http(s) URL ending in '/', got {archive!r}"
            )
        terms = _text(data, "terms", source)
        entries = data.get("log", [])
        if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
            raise InvalidConfigError(f"{source}: log must be an array of tables ([[log]])")
        logs = tuple(_log(entry, archive, source, i) for i, entry in enumerate(entries))
        seen: set[str] = set()
        for log in logs:
            if log.name.lower() in seen:
                raise InvalidConfigError(f"{source}: log {log.name}: the name appears twice")
            seen.add(log.name.lower())
        return cls(archive=archive, terms=terms, logs=logs)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Catalogue:
        """A catalogue read from a TOML file.

        Raises:
            InvalidConfigError: the file does not parse or is not a catalogue.
        """
        data = read_toml_or_yaml(Path(path), "trace catalogue")
        if not isinstance(data, Mapping):
            raise InvalidConfigError(f"{path}: a trace catalogue is a table of archive, terms and [[log]]")
        return cls.from_mapping(data, str(path))

    @property
    def names(self) -> tuple[str, ...]:
        """The logs' names, in the catalogue's order."""
        return tuple(log.name for log in self.logs)

    def find(self, name: str) -> CatalogueLog | None:
        """The log called ``name``, or ``name`` + ``.swf`` or ``.swf.gz`` (letter case ignored), or None.

        >>> load_catalogue().find("sdsc-sp2-1998-4.2-cln.swf.gz").name
        'SDSC-SP2-1998-4.2-cln'
        """
        key = _stem(name)
        for log in self.logs:
            if key == log.name.lower():
                return log
        return None

    def get(self, name: str) -> CatalogueLog:
        """The log called ``name`` (or whose file is ``name``).

        Raises:
            UnknownNameError: no such log; the message lists the close names, or all of them.
        """
        log = self.find(name)
        if log is None:
            raise UnknownNameError(f"no trace {name!r} in the catalogue; {self._suggest(name)}")
        return log

    def close_names(self, name: str) -> list[str]:
        """Names of the catalogue that ``name`` is probably meant to be (a prefix, a near miss)."""
        key = _stem(name)
        starts = [log.name for log in self.logs if log.name.lower().startswith(key)]
        if starts:
            return starts
        lowered = {log.name.lower(): log.name for log in self.logs}
        return [lowered[k] for k in difflib.get_close_matches(key, list(lowered), n=3, cutoff=0.75)]

    def _suggest(self, name: str) -> str:
        close = self.close_names(name)
        if close:
            return f"did you mean {' or '.join(close)}? (`hpcgym traces list` lists them all)"
        return f"known: {', '.join(self.names)}"


@functools.lru_cache(maxsize=1)
def load_catalogue() -> Catalogue:
    """The catalogue shipped with hpcgym (``hpcgym/workloads/catalogue.toml``)."""
    return Catalogue.from_file(Path(str(resources.files("hpcgym.workloads").joinpath(CATALOGUE_FILE))))


def trace_cache_dir(environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The trace folder: ``$HPCGYM_TRACES``, else the user's cache folder + ``hpcgym/traces``.

    The cache folder is the one ``platformdirs.user_cache_dir("hpcgym")`` gives (Linux and other
    Unix systems: ``$XDG_CACHE_HOME`` if it is an absolute path, else ``~/.cache``; macOS:
    ``~/Library/Caches``; Windows: ``%LOCALAPPDATA%\\hpcgym\\Cache``).

    >>> trace_cache_dir({"HPCGYM_TRACES": "/data/traces"}).as_posix()
    '/data/traces'
    >>> trace_cache_dir({"XDG_CACHE_HOME": "/c", "HOME": "/h"}, platform="linux").as_posix()
    '/c/hpcgym/traces'
    >>> trace_cache_dir({"HOME": "/h"}, platform="linux").as_posix()
    '/h/.cache/hpcgym/traces'
    """
    env = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    given = env.get(ENV_TRACES, "")
    if given:
        return Path(os.path.expanduser(given))
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    if platform == "win32":
        local = env.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(local) / "hpcgym" / "Cache" / "traces"
    if platform == "darwin":
        return home / "Library" / "Caches" / "hpcgym" / "traces"
    xdg = env.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".cache"
    return base / "hpcgym" / "traces"


def cached_path(log: CatalogueLog, directory: str | os.PathLike[str] | None = None) -> Path | None:
    """The log's file in ``directory`` (default: the trace folder) if it is there, else None."""
    path = Path(directory if directory is not None else trace_cache_dir()) / log.file
    return path if path.is_file() else None


def resolve_trace(
    trace: str | os.PathLike[str],
    *,
    catalogue: Catalogue | None = None,
    directory: str | os.PathLike[str] | None = None,
) -> Path:
    """The file a trace argument names: the path itself, or a catalogue log's downloaded copy.

    See the module's docstring for the rule: an existing path wins; else a catalogue name
    (or a log's file name) is its file in ``directory`` (default: the trace folder); else
    the path as given.

    Raises:
        MissingTraceError: a catalogue name whose log is not downloaded (the message says
            ``hpcgym traces fetch NAME``), or a bare name that is no file but close to a
            catalogue name (the message suggests it).
    """
    path = Path(trace)
    if path.exists():
        return path
    text = os.fspath(trace)
    if os.sep in text or (os.altsep is not None and os.altsep in text) or not _NAME_RE.match(text):
        return path
    cat = load_catalogue() if catalogue is None else catalogue
    log = cat.find(text)
    folder = Path(directory) if directory is not None else trace_cache_dir()
    if log is not None:
        found = cached_path(log, folder)
        if found is None:
            raise MissingTraceError(
                f"trace {log.name} is in the catalogue but not downloaded (no {log.file} in {folder}): "
                f"run `hpcgym traces fetch {log.name}` (or set {ENV_TRACES} to a folder that has it)"
            )
        return found
    close = cat.close_names(text)
    if close and path.suffix.lower() not in (".swf", ".gz", ".csv", ".parquet"):
        raise MissingTraceError(
            f"no file {text!r} and no catalogue trace of that name; did you mean {' or '.join(close)}? "
            "(`hpcgym traces list` lists them)"
        )
    return path


@dataclass(frozen=True)
class Fetched:
    """What :func:`fetch_trace` did for one log."""

    log: CatalogueLog
    path: Path
    """the verified file"""
    downloaded_bytes: int
    """bytes downloaded; 0 when the file was already there (and was verified instead)"""


def fetch_trace(
    name: str,
    directory: str | os.PathLike[str] | None = None,
    *,
    catalogue: Catalogue | None = None,
    progress: bool | None = None,
    timeout: float | None = None,
) -> Fetched:
    """Download the catalogue log ``name`` into ``directory`` (default: the trace folder).

    A file already there under the log's file name is checked instead (the SHA-256 of its
    content) and kept if it matches; no download then. A new download is kept only if its
    content's SHA-256 matches the catalogue's and is renamed into place atomically
    (:func:`~hpcgym.common.download.download_verified`).

    Args:
        name: a catalogue name, or a log's file name (letter case ignored).
        directory: where the file goes (created if need be).
        catalogue: the catalogue to use (default: the shipped one).
        progress: a progress bar on stderr (default: only when stderr is a terminal).
        timeout: seconds to wait for the server (default
            :data:`hpcgym.common.download.TIMEOUT_S`).

    Raises:
        UnknownNameError: ``name`` is not in the catalogue.
        DownloadError: the download failed (HTTP error, no network, a truncated body, a wrong
            checksum) or the file already there does not match the catalogue (it is left as
            it is: delete it and fetch again); the message names the trace and the cause.
    """
    cat = load_catalogue() if catalogue is None else catalogue
    log = cat.get(name)
    folder = Path(directory) if directory is not None else trace_cache_dir()
    path = folder / log.file
    if path.is_file():
        try:
            digest, _ = content_sha256(path, gunzip=True)
        except ContentError as err:
            digest = f"unreadable ({err})"
        if digest != log.sha256:
            raise DownloadError(
                f"trace {log.name}: {path} is already there but its content does not match the "
                f"catalogue (SHA-256 {digest}, expected {log.sha256}); it was left as it is: delete "
                "it and fetch again"
            )
        return Fetched(log=log, path=path, downloaded_bytes=0)
    extra = {} if timeout is None else {"timeout": timeout}
    got = download_verified(
        log.url,
        path,
        sha256=log.sha256,
        what=f"trace {log.name}",
        gunzip=True,
        content_bytes=log.content_bytes,
        progress=progress,
        **extra,
    )
    return Fetched(log=log, path=path, downloaded_bytes=got)


def catalogue_rows(
    catalogue: Catalogue | None = None, directory: str | os.PathLike[str] | None = None
) -> list[dict[str, Any]]:
    """One dict per log: its fields, ``url``, ``page`` and ``cached`` (the path of its file in
    ``directory``, default the trace folder, or None), for ``hpcgym traces list``."""
    cat = load_catalogue() if catalogue is None else catalogue
    folder = Path(directory) if directory is not None else trace_cache_dir()
    rows = []
    for log in cat.logs:
        found = cached_path(log, folder)
        rows.append({**log.to_dict(), "cached": None if found is None else str(found)})
    return rows


_LOG_KEYS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "folder": str,
    "file": str,
    "system": str,
    "processors": int,
    "nodes": int,
    "jobs": int,
    "span_days": (int, float),
    "first_day": str,
    "last_day": str,
    "sha256": str,
    "content_bytes": int,
    "acknowledge": str,
}
_OPTIONAL_KEYS: dict[str, type | tuple[type, ...]] = {"terms": str, "note": str, "used_by": list}


def _stem(name: str) -> str:
    """A trace name or file name without ``.gz`` and ``.swf``, in lower case."""
    return name.lower().removesuffix(".gz").removesuffix(".swf")


def _log(entry: Mapping[str, Any], archive: str, source: str, index: int) -> CatalogueLog:
    """The ``index``-th ``[[log]]`` table, checked; errors name ``source`` and the log."""
    name = entry.get("name")
    where = f"{source}: log {name if isinstance(name, str) else index + 1}"
    _only_keys(entry, set(_LOG_KEYS) | set(_OPTIONAL_KEYS), where)
    values: dict[str, Any] = {}
    for key, kind in {**_LOG_KEYS, **_OPTIONAL_KEYS}.items():
        if key not in entry:
            if key in _LOG_KEYS:
                raise InvalidConfigError(f"{where}: {key} is missing")
            continue
        value = entry[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            raise InvalidConfigError(f"{where}: {key} must be {_kind_name(kind)}, got {value!r}")
        values[key] = value
    for key in ("processors", "nodes", "jobs", "content_bytes"):
        if values[key] <= 0:
            raise InvalidConfigError(f"{where}: {key} must be positive, got {values[key]}")
    if not math.isfinite(values["span_days"]) or values["span_days"] < 0:
        raise InvalidConfigError(f"{where}: span_days must be a number >= 0, got {values['span_days']}")
    if not _SHA256_RE.match(values["sha256"]):
        raise InvalidConfigError(
            f"{where}: sha256 must be 64 lower-case hex digits, got {values['sha256']!r}"
        )
    if not _NAME_RE.match(values["name"]) or values["file"] != f"{values['name']}.swf.gz":
        raise InvalidConfigError(
            f"{where}: name must be a plain name and file the archive's NAME.swf.gz, got "
            f"{values['name']!r} and {values['file']!r}"
        )
    used_by = values.pop("used_by", [])
    if not all(isinstance(u, str) for u in used_by):
        raise InvalidConfigError(f"{where}: used_by must be a list of strings")
    return CatalogueLog(**values, archive=archive, used_by=tuple(used_by))


def _only_keys(data: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(data) - known)
    if unknown:
        raise InvalidConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidConfigError(f"{where}: {key} must be a non-empty string, got {value!r}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds: Sequence[type] = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "an integer", float: "a number", str: "a string", list: "a list"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


__all__ = [
    "CATALOGUE_FILE",
    "ENV_TRACES",
    "Catalogue",
    "CatalogueLog",
    "Fetched",
    "cached_path",
    "catalogue_rows",
    "fetch_trace",
    "load_catalogue",
    "resolve_trace",
    "trace_cache_dir",
]
