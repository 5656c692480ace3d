"""Where each Eurora generator parameter comes from (issue 24, point 9): 001, 002 or an assumption."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from hpcgym.workloads import EURORA_SOURCES, EuroraParams, eurora, eurora_fields_by_source, shares
from hpcgym.workloads.eurora_sources import SOURCE_KINDS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "WORKLOADS.md"


def test_every_parameter_has_a_source_and_a_reason() -> None:
    fields = [f.name for f in dataclasses.fields(EuroraParams)]
    assert sorted(EURORA_SOURCES) == sorted(fields)
    for name, (kind, reason) in EURORA_SOURCES.items():
        assert kind in SOURCE_KINDS and len(reason) > 10, name


def test_shares_no_paper_gives_are_assumptions() -> None:
    assumed = set(eurora_fields_by_source()["assumption"])
    # queue, node, core and GPU/MIC shares: in neither 001 nor 002
    assert {"queues", "queue_shares", "request_shape", "accelerator", "cores_weights", "mem_sigma"} <= assumed
    assert {"class_mix", "class_bounds_s"} <= set(eurora_fields_by_source()["001, 002"])
    assert "four" in EURORA_SOURCES["queues"][1]  # 002's four queues, and why the preset keeps five


def test_docs_table_gives_each_parameter_its_source() -> None:
    text = DOCS.read_text()
    for name, (kind, _) in EURORA_SOURCES.items():
        row = re.search(rf"^\| `{name}`.*$", text, re.M) or re.search(
            rf"^\| `[a-z_]+`, `{name}`.*$", text, re.M
        )
        assert row is not None, name
        assert f"| **{kind}**" in row.group(0), (name, kind)


def test_help_says_which_shares_are_assumptions(capsys: pytest.CaptureFixture[str]) -> None:
    from hpcgym.cli import main

    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "calibrated to 001 and 002" not in text
    assumed = text.split("Assumptions, in neither paper:")[1]
    for name in ("queue_shares", "request_shape", "accelerator"):
        assert name in assumed
    assert "four queues" in text


def test_the_documented_cpu_time_by_class_is_what_the_generator_gives() -> None:
    """docs/WORKLOADS.md and SOURCES state the CPU-time shares that miss 001's; they must stay true."""
    s = shares(eurora(100_000, seed=1))
    got = [round(100 * s[f"cpu_time:{c}"], 1) for c in ("short", "medium", "long")]
    assert got == [3.1, 96.0, 0.8]
    assert (
        "3.1 / 96.0 / 0.8 %" in EURORA_SOURCES["level_alpha"][1] and "3.1 / 96.0 / 0.8 %" in DOCS.read_text()
    )
