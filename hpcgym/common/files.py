"""Reading input files: text, gunzipped if need be (traces, job tables); TOML, or YAML with
PyYAML (machine descriptions, sweep specs). Writing a file atomically: bytes or text
(:func:`write_atomic`, :func:`write_text_atomic`), or whatever a library writes to a path
(:func:`atomic_path`: matplotlib's ``savefig``, pyarrow, stable-baselines3's ``save``)."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import secrets
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from hpcgym.common.errors import InvalidConfigError, TraceFormatError


def read_text(path: Path, name: str) -> str:
    """The file's text, gunzipped if need be, with universal newlines (\r\n and \r become \n).

    A UTF-8 byte-order mark at the start (some editors on Windows write one) is dropped.

    Raises:
        TraceFormatError: a gzip file that cannot be read; the message names ``name``.
    """
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:
            raise TraceFormatError(name, None, f"not a readable gzip file ({err})") from err
    with io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors="replace") as fh:
        return fh.read()


def text_lines(path: Path, name: str) -> Iterator[str]:
    """The lines of :func:`read_text`'s text, ``read_text(path, name).split("\n")``, read piece by piece.

    The same text (gunzipped if need be, universal newlines, a byte-order mark dropped,
    undecodable bytes replaced), but only a few kilobytes of it are held at a time: a
    large trace is never in memory whole. Lines come without their ``\n``; as with
    ``split``, a text ending in ``\n`` (or an empty one) ends with an empty line.

    Raises:
        TraceFormatError: a gzip file that cannot be read, raised when the reading gets
            to the damage; the message names ``name``.
    """
    with path.open("rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        stream: Any = gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw
        with io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace") as fh:
            ended = True  # the text so far ends a line (or is empty)
            try:
                for line in fh:
                    ended = line.endswith("\n")
                    yield line[:-1] if ended else line
            except (OSError, EOFError, zlib.error) as err:
                if not gz:
                    raise
                raise TraceFormatError(name, None, f"not a readable gzip file ({err})") from err
            if ended:
                yield ""


_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
"""Control characters no text file holds (tab, line feed, vertical tab, form feed and carriage
return are text). Python's ``str.split()`` and ``str.strip()`` treat 0x1C-0x1F as white space,
so a line of them looks blank to a reader that does not ask."""


def control_characters(line: str) -> str | None:
    """What control characters ``line`` holds, for an error message; None if it holds none.

    >>> control_characters("1 2 3"), control_characters("\x1c" * 3)
    (None, '3 control characters (the first 0x1C at column 1)')
    """
    found = _CONTROL.search(line)
    if found is None:
        return None
    n = len(_CONTROL.findall(line))
    return (
        f"{n:,} control character{'s' if n > 1 else ''} "
        f"(the first 0x{ord(found.group()):02X} at column {found.start() + 1})"
    )


def first_control_line(lines: Iterable[str], what: str = "text") -> str:
    """``line I holds only white space and N control characters ...: not WHAT`` for the first
    line that holds them, or ``""``: why a file that looks empty is not.

    >>> first_control_line(["", "\x1c\x1c"])
    'line 2 holds only white space and 2 control characters (the first 0x1C at column 1): not text'
    """
    for i, line in enumerate(lines, 1):
        if found := control_characters(line):
            return f"line {i} holds only white space and {found}: not {what}"
    return ""


def read_toml_or_yaml(path: Path, what: str) -> Any:
    """The parsed contents of a TOML file, or of a YAML file (``.yaml``, ``.yml``) with PyYAML.

    Raises:
        InvalidConfigError: the file does not parse, or YAML without PyYAML; the message
            names the file (and ``what`` it holds).
        FileNotFoundError: the file does not exist.
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml  # type: ignore[import-untyped]
        except ImportError:
            raise InvalidConfigError(
                f"{path}: reading a YAML {what} needs PyYAML (pip install pyyaml); or write it as TOML"
            ) from None
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise InvalidConfigError(f"{path}: not valid YAML: {err}") from err
    toml = _toml_module()
    try:
        return toml.loads(text)
    except toml.TOMLDecodeError as err:
        raise InvalidConfigError(f"{path}: not valid TOML: {err}") from err


def _toml_module() -> Any:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[import-not-found, no-redef]
        except ImportError:
            raise InvalidConfigError("reading TOML needs Python 3.11 or the tomli package") from None
    return tomllib


def write_atomic(path: str | os.PathLike[str], data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, renamed into place.

    ``data`` is the file's bytes, or pieces of them written one after another (so a large
    file need never be in memory whole). A reader sees the old file or the whole new one,
    never a part: an interrupted write leaves the old file (or none) and removes its
    temporary file. The new file gets the permissions an ordinary ``open(path, "w")``
    would give it (0666 less the umask).

    Raises:
        OSError: the folder does not exist or is not writable.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            for piece in [data] if isinstance(data, bytes | bytearray | memoryview) else data:
                fh.write(piece)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically (:func:`write_atomic`)."""
    write_atomic(path, text.encode("utf-8"))


def _temporary_name(target: Path) -> Path:
    """A hidden name beside ``target`` ending in its suffix, so a writer that reads the format
    from the suffix (matplotlib, ``.gz``, stable-baselines3's ``.zip``) writes the right one."""
    return target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp{target.suffix}")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed to ``path`` when the block ends.

    For writers that only take a path (``fig.savefig(tmp)``, ``pq.write_table(t, tmp)``,
    ``model.save(tmp)``): the file is written under a hidden name in the same folder,
    flushed to disk and renamed into place, so ``path`` holds the old file or the whole
    new one, never a part. If the block raises (or is interrupted), the temporary file is
    removed and ``path`` is left as it was.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with atomic_path(Path(d) / "a.txt") as tmp:
    ...         _ = tmp.write_text("new")
    ...     sorted(p.name for p in Path(d).iterdir())
    ['a.txt']
    """
    target = Path(path)
    tmp = _temporary_name(target)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
