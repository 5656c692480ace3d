"""The policies under evaluation: presets, dispatcher callables, agents and saved models.

A preset name or a dispatcher callable becomes a dispatcher the engine simulates on each
window; an object with ``predict`` or a saved model ``.zip`` (:func:`load_model`) an agent
that acts through the environment, with the environment arguments a model saved by
``hpcgym train`` carries (:func:`agent_env_kwargs`).
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hpcgym.baselines import make_policy, preset_predictor, resolve_policy_name
from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict import make_predictor
from hpcgym.sim import as_dispatcher, callable_name

BASELINES = (
    "fcfs",
    "easy",
    "sjf-est",
    "sjf",
    "saf",
    "saf-bf",
    "f1",
    "f1-bf",
    "f2",
    "f2-bf",
    "f3",
    "f3-bf",
    "f4",
    "f4-bf",
    "wfp3",
    "wfp3-bf",
    "unicep",
    "unicep-bf",
    "random-fit",
    "random-fit-bf",
    "easy++",
)
"""The heuristic baselines ``hpcgym evaluate`` runs by default: each queue order without
and with EASY backfilling (FCFS's are ``fcfs`` and ``easy``, SJF's ``sjf-est`` and
``sjf``), and EASY++."""


@dataclass
class Candidate:
    """One policy under evaluation.

    Attributes:
        name: its name in the tables.
        kind: ``"dispatcher"`` (simulated directly) or ``"agent"`` (acts through the env).
        make: a fresh dispatcher for a window (dispatchers).
        predictor: the predictor name the dispatcher plans with (dispatchers).
        agent: the object with ``predict`` (agents).
        preset: the canonical preset name (registered dispatchers), else "".
        metadata: what a model saved by ``hpcgym train`` carries (agents), else None.
    """

    name: str
    kind: str
    preset: str = ""
    make: Callable[[], Any] | None = None
    predictor: Callable[[], Any] | None = None
    agent: Any = None
    metadata: dict[str, Any] | None = None


def _model_is_maskable(path: Path) -> bool:
    """Whether a saved stable-baselines3 model was trained with action masks (sb3-contrib)."""
    try:
        with zipfile.ZipFile(path) as z:
            data = z.read("data").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile) as err:
        raise InvalidConfigError(f"model {path}: not a saved stable-baselines3 model (.zip): {err}") from err
    return "sb3_contrib" in data or "Maskable" in data


def load_model(path: str | os.PathLike[str]) -> Any:
    """A saved model: ``MaskablePPO`` (sb3-contrib) if it was trained with masks, else ``PPO``.

    Raises:
        InvalidConfigError: the file is missing or not a saved model.
        MissingExtraError: stable-baselines3 / sb3-contrib are not installed (the ``rl`` extra).
    """
    from hpcgym.common.extras import require

    p = Path(path)
    if p.is_dir():
        inside = sorted(q.name for q in p.glob("*.zip"))[:5]
        hint = f" (it holds {', '.join(inside)})" if inside else ""
        raise InvalidConfigError(
            f"model {p}: is a folder; give a saved model file (.zip) in it{hint}, e.g. "
            f"{p / (inside[0] if inside else 'best_model.zip')}"
        )
    if not p.is_file():
        raise InvalidConfigError(f"model: no such file {p}")
    maskable = _model_is_maskable(p)
    require("rl", "stable_baselines3", *(("sb3_contrib",) if maskable else ()), what=f"loading the model {p}")
    if maskable:
        from sb3_contrib import MaskablePPO

        return MaskablePPO.load(p, device="cpu")
    from stable_baselines3 import PPO

    return PPO.load(p, device="cpu")


def _candidate(policy: Any, name: str | None, predictor: str | None) -> Candidate:
    if isinstance(policy, (str, os.PathLike)):
        text = os.fspath(policy)
        # A path object is always a model (``hpcgym evaluate --model`` passes them so, and a
        # folder named like a preset must not become the preset); a string is one when it
        # looks like a file path.
        if not isinstance(policy, str) or text.endswith(".zip") or (os.sep in text and Path(text).exists()):
            from hpcgym.agents.models import read_metadata

            model = load_model(text)
            return Candidate(name or Path(text).stem, "agent", agent=model, metadata=read_metadata(text))
        key = resolve_policy_name(text)
        return Candidate(
            name or key,
            "dispatcher",
            preset=key,
            make=lambda: make_policy(key),
            predictor=lambda: preset_predictor(key, predictor),
        )
    if hasattr(policy, "predict"):
        return Candidate(name or type(policy).__name__.lower(), "agent", agent=policy)
    if callable(policy):
        d = as_dispatcher(policy)
        return Candidate(
            name or callable_name(policy),
            "dispatcher",
            make=lambda: d,
            predictor=lambda: make_predictor(predictor if predictor is not None else "walltime"),
        )
    raise InvalidConfigError(
        f"policies: {policy!r} is neither a preset name, a model file, a dispatcher callable nor an "
        "object with predict()"
    )


def candidates(
    policies: Sequence[Any] | Mapping[str, Any], reference: str | None, predictor: str | None
) -> list[Candidate]:
    """The policies as :class:`Candidate` objects, the reference preset added last if missing.

    ``reference=None``: none is added (``--reference best`` picks one of the policies).

    Raises:
        InvalidConfigError: two policies share a name, or a policy is not usable.
    """
    items = list(policies.items()) if isinstance(policies, Mapping) else [(None, p) for p in policies]
    out = [_candidate(p, n, predictor) for n, p in items]
    ref = None if reference is None else resolve_policy_name(reference)
    same = [c for c in out if c.name == ref]
    if ref is None:
        pass
    elif not same:
        out.append(_candidate(ref, None, predictor))
    elif same[0].preset != ref:
        raise InvalidConfigError(
            f"policies: {ref!r} names the reference preset but is given as another policy; rename it"
        )
    names = [c.name for c in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidConfigError(f"policies: the name(s) {', '.join(dup)} are given twice; name them apart")
    return out


def agent_env_kwargs(
    c: Candidate,
    env_kwargs: Mapping[str, Any] | None,
    predictor: str | None,
    split_fractions: tuple[float, float, float],
) -> tuple[str | None, dict[str, Any]]:
    """The predictor and environment arguments an agent plays with.

    A model saved by ``hpcgym train`` brings its own (everything but the trace and the
    windows, :func:`hpcgym.agents.models.evaluation_env_kwargs`); ``env_kwargs``
    override them, and ``predictor`` overrides the model's predictor.

    Raises:
        InvalidConfigError: an explicit argument contradicts the model where that matters
            (:data:`hpcgym.agents.models.SHAPING`: what it sees or what its actions mean),
            or the model was trained with other split fractions (its test split would
            not be held out).
    """
    kw = dict(env_kwargs or {})
    if c.metadata is not None:
        from hpcgym.agents.models import SHAPING, evaluation_env_kwargs

        recorded = evaluation_env_kwargs(c.metadata)
        for key, value in kw.items():
            mine = recorded.get(key)
            if key in SHAPING and key in recorded and _same(value) != _same(mine):
                raise InvalidConfigError(
                    f"{key} (--{key.replace('_', '-')}): {value!r} contradicts the model {c.name!r}, "
                    f"trained with {key}={mine!r}; leave it out to use the model's"
                )
        fractions = c.metadata["env"]["kwargs"].get("split_fractions")
        if fractions is not None and _same(fractions) != _same(split_fractions):
            raise InvalidConfigError(
                f"split_fractions: the model {c.name!r} was trained with split fractions {fractions}, "
                f"not {list(split_fractions)}: its training windows may fall in this evaluation's split"
            )
        kw = {**recorded, **kw}
    pred = kw.pop("predictor", None)
    return (predictor if predictor is not None else pred), kw


def _same(value: Any) -> Any:
    """``value`` comparable with its JSON round trip (lists and tuples alike)."""
    return tuple(value) if isinstance(value, (list, tuple)) else value
