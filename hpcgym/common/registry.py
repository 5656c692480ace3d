"""Named factories: one registry style for policies, predictors, rewards, observations, machines.

A :class:`Registry` maps a name (and its aliases) to a factory and a one-line
description. Names are matched case-insensitively; :meth:`Registry.resolve` turns
whatever a user typed into the canonical name, once, and callers keep that name. An
unknown name raises :class:`~hpcgym.common.errors.UnknownNameError` listing the known names,
with a "did you mean" hint when one is close; registering a name (or alias) that is
taken raises :class:`~hpcgym.common.errors.InvalidConfigError` unless ``replace=True``.

>>> shapes = Registry[str]("shape")
>>> _ = shapes.register("square", lambda side=1: f"square {side}", aliases=("sq",), description="four sides")
>>> shapes.resolve("SQ")
'square'
>>> shapes.make("square", side=3)
'square 3'
>>> shapes.resolve("sqare")
Traceback (most recent call last):
    ...
hpcgym.common.errors.UnknownNameError: unknown shape 'sqare'; known shapes: square; did you mean 'square'?
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from hpcgym.common.errors import InvalidConfigError, UnknownNameError

T = TypeVar("T")
D = TypeVar("D")

_MISSING: Any = object()


def factory_parameters(factory: Callable[..., Any]) -> tuple[str, ...] | None:
    """The keyword parameters ``NAME:key=value`` may set on ``factory``; None if any are accepted.

    None also when the factory has no signature to read (a builtin) or takes ``**kwargs``.
    """
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # a builtin or an object without a signature
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def parse_value(text: str) -> object:
    """A ``key=value`` parameter's value: true/false, none, an int, a float, else the text.

    >>> parse_value("2"), parse_value("0.5"), parse_value("True"), parse_value("none"), parse_value("x")
    (2, 0.5, True, None, 'x')
    """
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def summary_line(obj: object) -> str:
    """The first line of ``obj``'s docstring ("" without one): a class's registry description."""
    lines = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    return lines[0].strip() if lines else ""


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered name.

    Attributes:
        name: the canonical name, as registered.
        factory: builds a fresh object; :meth:`Registry.make` passes its arguments on.
        description: one line for listings (``hpcgym policies``, ``hpcgym predictors``).
        aliases: other accepted names (lower case).
    """

    name: str
    factory: Callable[..., T]
    description: str = ""
    aliases: tuple[str, ...] = ()


class Registry(Generic[T]):
    """Factories of ``T`` by name, in registration order.

    Args:
        kind: what one entry is, for messages (``"policy"``).
        plural: its plural (default: ``kind + "s"``; ``"policies"`` must be given).
        usage: added after the list of known names in the unknown-name message (e.g.
            how to add parameters to a name).
    """

    def __init__(self, kind: str, plural: str | None = None, *, usage: str = "") -> None:
        self.kind = kind
        self.plural = plural if plural is not None else f"{kind}s"
        self.usage = usage
        self._entries: dict[str, Entry[T]] = {}
        self._keys: dict[str, str] = {}  # lower-case name or alias -> canonical name

    # ------------------------------------------------------------------ registering
    def register(
        self,
        name: str,
        factory: Callable[..., T],
        *,
        aliases: tuple[str, ...] | list[str] = (),
        description: str = "",
        replace: bool = False,
    ) -> Callable[..., T]:
        """Make ``factory`` available as ``name`` and ``aliases``; returns ``factory``.

        Raises:
            InvalidConfigError: a name is empty or not a string, ``factory`` is not
                callable, or a name or alias is taken (by another entry, or by this
                one without ``replace=True``).
        """
        names = (name, *aliases)
        for n in names:
            if not isinstance(n, str) or not n.strip() or n != n.strip():
                raise InvalidConfigError(
                    f"{self.kind} name {n!r} must be a non-empty string without leading or trailing spaces"
                )
        if not callable(factory):
            raise InvalidConfigError(f"{self.kind} {name!r}: the factory must be callable, got {factory!r}")
        lowered = [n.lower() for n in names]
        if len(set(lowered)) != len(lowered):
            raise InvalidConfigError(f"{self.kind} {name!r}: a name or alias is given twice in {names!r}")
        existing = self._keys.get(lowered[0])
        replacing = existing is not None and existing.lower() == lowered[0]
        if replacing and not replace:
            raise InvalidConfigError(
                f"{self.kind} {name!r} is already registered; pass replace=True to replace it"
            )
        for n, key in zip(names, lowered, strict=True):
            owner = self._keys.get(key)
            if owner is not None and not (replacing and owner == existing):
                raise InvalidConfigError(f"{self.kind} name {n!r} is already taken by {owner!r}")
        entry = Entry(name, factory, description, tuple(lowered[1:]))
        if replacing:
            assert existing is not None
            old = self._entries[existing]
            for key in (existing.lower(), *old.aliases):
                del self._keys[key]
            # keep the entry's place in the listing
            self._entries = {
                name if n == existing else n: entry if n == existing else e for n, e in self._entries.items()
            }
        else:
            self._entries[name] = entry
        for key in lowered:
            self._keys[key] = name
        return factory

    @overload
    def pop(self, name: str) -> Entry[T]: ...

    @overload
    def pop(self, name: str, default: D) -> Entry[T] | D: ...

    def pop(self, name: str, default: Any = _MISSING) -> Any:
        """Remove ``name`` (or the entry an alias names) with its aliases and return its entry.

        Like :meth:`dict.pop`: ``default`` is returned for an unknown name if given, else
        :class:`~hpcgym.common.errors.UnknownNameError` is raised.
        """
        try:
            canonical = self.resolve(name)
        except UnknownNameError:
            if default is _MISSING:
                raise
            return default
        entry = self._entries.pop(canonical)
        for key in (canonical.lower(), *entry.aliases):
            del self._keys[key]
        return entry

    # ------------------------------------------------------------------ looking up
    def resolve(self, name: str) -> str:
        """The canonical name for ``name`` or one of its aliases, in any case.

        Raises:
            UnknownNameError: no such name; the message lists the known names and the
                closest ones.
            InvalidConfigError: ``name`` is not a string.
        """
        if not isinstance(name, str):
            raise InvalidConfigError(
                f"a {self.kind} must be given by name ({', '.join(self._entries)}), got {name!r}"
            )
        canonical = self._keys.get(name.strip().lower())
        if canonical is None:
            raise UnknownNameError(self._unknown(name))
        return canonical

    def _unknown(self, name: str) -> str:
        known = ", ".join(self._entries) or "none"
        usage = f" {self.usage}" if self.usage else ""
        close = difflib.get_close_matches(name.strip().lower(), list(self._keys), n=1)
        hint = f"; did you mean {self._keys[close[0]]!r}?" if close else ""
        return f"unknown {self.kind} {name!r}; known {self.plural}: {known}{usage}{hint}"

    def entry(self, name: str) -> Entry[T]:
        """The entry of ``name`` or an alias (see :meth:`resolve` for the errors)."""
        return self._entries[self.resolve(name)]

    def factory(self, name: str) -> Callable[..., T]:
        """The factory registered as ``name`` or an alias."""
        return self.entry(name).factory

    def make(self, name: str, /, *args: Any, **kwargs: Any) -> T:
        """A fresh object: the factory of ``name`` called with ``args`` and ``kwargs``."""
        return self.entry(name).factory(*args, **kwargs)

    # ------------------------------------------------------------------ listing
    def names(self) -> list[str]:
        """Canonical names in registration order."""
        return list(self._entries)

    def items(self) -> list[tuple[str, Entry[T]]]:
        """``(canonical name, entry)`` pairs in registration order."""
        return list(self._entries.items())

    def descriptions(self) -> dict[str, str]:
        """Canonical name -> one-line description."""
        return {n: e.description for n, e in self._entries.items()}

    def aliases(self) -> dict[str, str]:
        """Alias -> canonical name."""
        return {alias: n for n, e in self._entries.items() for alias in e.aliases}

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.strip().lower() in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"
