"""The README's examples stay the ones the suite runs."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


def test_readme_training_example_is_the_tested_one_in_env_docs() -> None:
    readme = [b for b in python_blocks(ROOT / "README.md") if "MaskablePPO" in b]
    env_doc = [b for b in python_blocks(ROOT / "docs" / "ENV.md") if "MaskablePPO" in b]
    assert readme and env_doc
    assert readme[0] == env_doc[0]
    assert len(readme[0].strip().splitlines()) <= 10


def test_readme_custom_dispatcher_example_runs() -> None:
    block = next(b for b in python_blocks(ROOT / "README.md") if "def smallest_first" in b)
    namespace: dict[str, object] = {}
    exec(compile(block, "README.md", "exec"), namespace)
    schedule = namespace["schedule"]
    assert np.isfinite(schedule.start).all()  # type: ignore[attr-defined]


def test_readme_quickstart_has_exactly_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    quick = text.split("## Quickstart", 1)[1].split("##", 1)[0]
    commands = re.findall(r"```\n(.*?)```", quick, flags=re.S)[0].split("\n")
    assert [c for c in commands if c.strip()] == ["make demo", "make test"]
