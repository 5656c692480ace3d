"""Downloading a file that must be exactly what was expected: checked by the SHA-256 of its
content, written atomically.

:func:`download_verified` fetches a URL with the standard library (``urllib``; no extra
dependency) into a temporary file in the destination's folder, hashing the content as it
arrives, and renames the file into place only when the body is complete and the checksum
matches. The checksum is of the *content*: for a gzip file, of its uncompressed bytes, so a
copy compressed again (other level, other tool) verifies too, and a gzip stream that ends
early is caught even when the server sent no length.

Every failure (an HTTP status other than 200, no network, a refused connection, no answer
within the timeout, a body shorter than its ``Content-Length``, a broken gzip stream, a wrong
checksum, Ctrl-C) raises :class:`~hpcgym.common.errors.DownloadError` naming what was
fetched, the URL and the cause, after removing the temporary file: the destination either
does not exist or holds verified content, never a partial file. (A process killed outright,
``kill -9``, can leave its ``.NAME.*.part`` temporary file behind; nothing reads those.)

A progress bar (tqdm, on stderr) is shown by default only when stderr is a terminal, as the
simulator's is.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import socket
import sys
import tempfile
import urllib.error
import urllib.request
import zlib
from pathlib import Path
from typing import BinaryIO

from hpcgym.common.errors import DownloadError

CHUNK = 256 * 1024
"""Bytes read from the network (or a file being checked) at a time."""
TIMEOUT_S = 60.0
"""Seconds to wait for the server to connect or to send the next bytes."""
USER_AGENT = "hpcgym (trace catalogue; Python urllib)"
"""The ``User-Agent`` header of hpcgym's downloads."""
GZIP_MAGIC = b"\x1f\x8b"


class ContentError(ValueError):
    """The bytes are not what they claim to be (not gzip, a gzip stream that ends early)."""


class ContentHash:
    """The SHA-256 and length of a file's content, fed in pieces as the bytes arrive.

    With ``gunzip``, the bytes must be gzip (one member or several, as ``gzip`` concatenates
    them) and the hash is of the uncompressed content; :meth:`finish` raises
    :class:`ContentError` if they are not gzip or the stream stops inside a member.

    >>> import gzip
    >>> h = ContentHash(gunzip=True)
    >>> data = gzip.compress(b"1 0 0 5 1\\n")
    >>> h.feed(data[:7]); h.feed(data[7:])
    >>> h.finish() == (hashlib.sha256(b"1 0 0 5 1\\n").hexdigest(), 10)
    True
    """

    def __init__(self, *, gunzip: bool) -> None:
        self._sha = hashlib.sha256()
        self._size = 0
        self._head: bytes | None = b"" if gunzip else None  # the first bytes, until the magic is checked
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if gunzip else None
        self._between_members = False

    def feed(self, chunk: bytes) -> None:
        """Add the next bytes of the file.

        Raises:
            ContentError: the bytes are not gzip (with ``gunzip``).
        """
        if self._inflate is None:
            self._add(chunk)
            return
        if self._head is not None:
            self._head += chunk
            if len(self._head) < len(GZIP_MAGIC):
                return
            if not self._head.startswith(GZIP_MAGIC):
                raise ContentError(f"not a gzip file: it starts with {self._head[:24]!r}")
            chunk, self._head = self._head, None
        while chunk:
            self._between_members = False
            try:
                self._add(self._inflate.decompress(chunk))
            except zlib.error as err:
                raise ContentError(f"not a valid gzip stream ({err})") from None
            if not self._inflate.eof:
                return
            chunk = self._inflate.unused_data  # the next member, if any
            self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
            self._between_members = True

    def finish(self) -> tuple[str, int]:
        """The hex SHA-256 of the content and its length in bytes.

        Raises:
            ContentError: with ``gunzip``, the bytes were empty or the gzip stream stopped
                inside a member (a truncated file).
        """
        if self._inflate is not None:
            if self._head is not None:
                raise ContentError("the file is empty" if not self._head else "not a gzip file")
            if not self._between_members:
                raise ContentError(
                    f"the gzip stream ends early, after {self._size:,} bytes of content (a truncated file)"
                )
        return self._sha.hexdigest(), self._size

    def _add(self, data: bytes) -> None:
        self._sha.update(data)
        self._size += len(data)


def content_sha256(path: str | os.PathLike[str], *, gunzip: bool) -> tuple[str, int]:
    """The hex SHA-256 of a file's content (uncompressed, with ``gunzip``) and its length.

    Raises:
        ContentError: with ``gunzip``, the file is not a complete gzip file.
        OSError: the file cannot be read.
    """
    h = ContentHash(gunzip=gunzip)
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.feed(chunk)
    return h.finish()


def download_verified(
    url: str,
    dest: str | os.PathLike[str],
    *,
    sha256: str,
    what: str,
    gunzip: bool = True,
    content_bytes: int | None = None,
    progress: bool | None = None,
    timeout: float = TIMEOUT_S,
) -> int:
    """Download ``url`` to ``dest``, keeping it only if its content's SHA-256 is ``sha256``.

    The bytes go to a temporary file in ``dest``'s folder (created if need be), which is
    renamed to ``dest`` (replacing a file there) once the body is complete and verified.

    Args:
        url: what to fetch (``https://``, ``http://``; redirects are followed).
        dest: where the file goes, as downloaded (still gzipped with ``gunzip``).
        sha256: the expected hex SHA-256 of the content (of the uncompressed bytes with
            ``gunzip``).
        what: names the download in messages (``"trace SDSC-SP2-1998-4.2-cln"``).
        gunzip: the file is gzip and ``sha256`` is of its uncompressed content.
        content_bytes: the expected length of the content, if known: reported beside a
            wrong checksum.
        progress: a progress bar on stderr; by default only when stderr is a terminal.
        timeout: seconds to wait for the connection and for each read.

    Returns:
        The number of bytes downloaded (the file's size on disk).

    Raises:
        DownloadError: the download failed or its content is not the expected one; the
            message names ``what``, ``url`` and the cause. ``dest`` is then untouched and no
            temporary file is left.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    kept = False
    got = [0]  # bytes received so far, for the messages of failures halfway
    try:
        with os.fdopen(fd, "wb") as out:
            digest, size = _fetch(url, out, got, gunzip=gunzip, what=what, progress=progress, timeout=timeout)
            out.flush()
            os.fsync(out.fileno())
        if digest != sha256.lower():
            sizes = (
                f"; {size:,} bytes of content, expected {content_bytes:,}"
                if content_bytes is not None and size != content_bytes
                else ""
            )
            raise DownloadError(
                f"{what}: the content downloaded from {url} has SHA-256 {digest}, expected {sha256}"
                f"{sizes} (a changed, corrupt or wrong file); nothing was kept"
            )
        os.replace(tmp, dest)
        kept = True
        return got[0]
    except DownloadError:
        raise
    except ContentError as err:
        raise DownloadError(f"{what}: {url}: {err}; nothing was kept") from None
    except urllib.error.HTTPError as err:
        raise DownloadError(f"{what}: {url}: HTTP {err.code} {err.reason}; nothing was kept") from None
    except urllib.error.URLError as err:
        raise DownloadError(f"{what}: cannot reach {url}: {_cause(err.reason, timeout)}") from None
    except (OSError, http.client.HTTPException) as err:
        raise DownloadError(
            f"{what}: {url}: the download broke off after {got[0]:,} bytes ({_cause(err, timeout)}); "
            "nothing was kept"
        ) from None
    finally:
        if not kept:
            tmp.unlink(missing_ok=True)


def _fetch(
    url: str,
    out: BinaryIO,
    got: list[int],
    *,
    gunzip: bool,
    what: str,
    progress: bool | None,
    timeout: float,
) -> tuple[str, int]:
    """Stream ``url`` into ``out``, counting bytes in ``got[0]``; the content's hash and length.

    Raises:
        ContentError: not gzip, or the gzip stream ends early (with ``gunzip``).
        DownloadError: the body is shorter than the server's ``Content-Length``.
        urllib.error.URLError, OSError, http.client.HTTPException: as urllib raises them.
    """
    from tqdm import tqdm

    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    content = ContentHash(gunzip=gunzip)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        if response.status != 200:  # urllib raises for 4xx/5xx and follows 3xx; 2xx other than 200 remain
            raise DownloadError(f"{what}: {url}: HTTP {response.status} {response.reason}; nothing was kept")
        length = _content_length(response.headers.get("Content-Length"))
        show = sys.stderr.isatty() if progress is None else progress
        with tqdm(
            total=length,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=what,
            file=sys.stderr,
            leave=False,
            disable=not show,
        ) as bar:
            while chunk := response.read(CHUNK):
                out.write(chunk)
                got[0] += len(chunk)
                content.feed(chunk)
                bar.update(len(chunk))
    if length is not None and got[0] < length:
        raise DownloadError(
            f"{what}: {url}: the body ended after {got[0]:,} of {length:,} bytes (a truncated "
            "download); nothing was kept"
        )
    return content.finish()


def _content_length(value: str | None) -> int | None:
    """The ``Content-Length`` header as a number, None if absent or not a number."""
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _cause(reason: object, timeout: float) -> str:
    """A network error in words: refused, host not found, timed out, or as the system says."""
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (nothing answers at that address)"
    if isinstance(reason, socket.gaierror):
        return f"host not found (no network or no name service?) ({reason})"
    if isinstance(reason, TimeoutError):
        return f"no answer within {timeout:g} s"
    return str(reason) or type(reason).__name__


__all__ = ["TIMEOUT_S", "ContentError", "ContentHash", "content_sha256", "download_verified"]
