"""Machines from Slurm: scontrol/sinfo node listings, partitions as queues, the TOML written back."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from checks import run_cli

from hpcgym.common.errors import InvalidConfigError, TraceFormatError
from hpcgym.machine import (
    Machine,
    compress_hostlist,
    expand_hostlist,
    machine_from_slurm,
    make_machine,
    parse_gres,
    parse_slurm_time,
    read_slurm_nodes,
    slurm_machine_file,
)

DATA = Path(__file__).resolve().parents[2] / "hpcgym" / "machine" / "data"
NODES = DATA / "slurm-nodes.txt"
SINFO = DATA / "slurm-sinfo.txt"
PARTITIONS = DATA / "slurm-partitions.txt"
SAMPLE = Path(__file__).resolve().parents[2] / "hpcgym" / "workloads" / "data" / "eurora-sample.csv"


def node_line(name="n01", cpus="8", mem="16384", gres="(null)", parts="batch", extra=""):
    return (
        f"NodeName={name} Arch=x86_64 CPUAlloc=0 CPUTot={cpus} Gres={gres} RealMemory={mem} "
        f"State=IDLE Partitions={parts}{extra}"
    )


def write(tmp_path: Path, name: str, *lines: str) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def same_machine(a: Machine, b: Machine) -> None:
    assert (a.name, a.resources, a.exclusive, a.allocation, a.description) == (
        b.name,
        b.resources,
        b.exclusive,
        b.allocation,
        b.description,
    )
    np.testing.assert_array_equal(a.capacity, b.capacity)
    assert {g: m.tolist() for g, m in a.groups.items()} == {g: m.tolist() for g, m in b.groups.items()}
    assert dict(a.queues) == dict(b.queues)


# ------------------------------------------------------------------ the fixtures
def test_scontrol_listing_gives_node_groups_and_queues():
    built = machine_from_slurm(NODES, PARTITIONS, name="site")
    m = built.machine
    assert m.resources == ("cores", "gpus", "mem_gb") and m.n_nodes == 42
    assert {g: len(v) for g, v in m.groups.items()} == {"cn": 32, "gpu": 8, "fat": 2}
    assert (m.capacity[m.groups["cn"]] == [32, 0, 191000 // 1024]).all()
    assert (m.capacity[m.groups["gpu"]] == [40, 4, 385000 // 1024]).all()  # gpu:tesla:4(S:0-1)
    assert (m.capacity[m.groups["fat"]] == [64, 0, 1546000 // 1024]).all()
    hours = {q: w / 3600 for q, (w, _) in m.queues.items()}
    assert hours == {"debug": 0.5, "parallel": 4, "longpar": 24, "gpu": 48, "maint": 48}
    assert all(ewt == 0 for _, ewt in m.queues.values()) and not m.exclusive
    assert built.node_names[2] == ("fat1", "fat2")
    notes = " ".join(built.notes)
    assert "maint" in notes and "UNLIMITED" in notes and "cn017" in notes  # the drained node is kept


def test_sinfo_listing_gives_the_same_machine_in_its_own_order():
    a = machine_from_slurm(NODES, PARTITIONS).machine
    b = machine_from_slurm(SINFO, PARTITIONS).machine  # sorted by name: cn, fat, gpu
    assert a.resources == b.resources and dict(a.queues) == dict(b.queues)
    for g in ("cn", "gpu", "fat"):
        np.testing.assert_array_equal(a.capacity[a.groups[g]], b.capacity[b.groups[g]])
    nodes, notes = read_slurm_nodes(SINFO)
    assert len(nodes) == 42 and not notes  # 116 lines: one per node and partition
    assert next(n for n in nodes if n.name == "cn001").partitions == ("debug", "parallel", "longpar")


def test_the_toml_reads_back_to_an_equal_machine(tmp_path):
    out = tmp_path / "site.toml"
    built = slurm_machine_file(NODES, out, partitions=PARTITIONS)
    assert built.machine.name == "site"
    same_machine(Machine.from_file(out), built.machine)
    same_machine(make_machine(str(out)), built.machine)
    text = out.read_text()
    assert "# cn: cn[001-032] (32 CPUs, RealMemory 191000 MB, Gres (null))" in text
    assert "max_walltime_s = 172800  # 2-00:00:00 (UNLIMITED;" in text
    assert [p.name for p in tmp_path.iterdir()] == ["site.toml"]  # no temporary file left


def test_cli_writes_the_machine_and_simulate_reads_it(tmp_path):
    out = tmp_path / "machine.toml"
    code, stdout, stderr = run_cli(
        "machines", "from-slurm", str(NODES), "--partitions", str(PARTITIONS), "-o", str(out)
    )
    assert code == 0, stderr
    assert "group gpu: 8 nodes" in stdout and f"wrote {out}" in stdout
    assert "note: 1 node was down" in stderr
    same_machine(Machine.from_file(out), machine_from_slurm(NODES, PARTITIONS, name="machine").machine)
    code, stdout, stderr = run_cli(
        "simulate", "--machine", str(out), "--workload", str(SAMPLE), "--policy", "easy", "--json"
    )
    assert code == 0, stderr
    # the sample's np_longpar and reservation jobs have no partition here, its MIC jobs no MICs
    assert "dropped 38: queue not on the machine" in stderr
    assert "dropped 2: asks for a resource the machine lacks" in stderr


def test_cli_errors_exit_2_and_leave_the_old_file(tmp_path):
    out = tmp_path / "m.toml"
    out.write_text("old\n")
    bad = write(tmp_path, "nodes.txt", node_line(), node_line("n02", cpus="eight"))
    code, _, stderr = run_cli("machines", "from-slurm", str(bad), "-o", str(out))
    assert code == 2 and f"{bad}:2: node n02, field CPUTot: 'eight'" in stderr and "Traceback" not in stderr
    assert out.read_text() == "old\n"
    code, _, stderr = run_cli("machines", "from-slurm", str(NODES), "-o", str(tmp_path / "m.txt"))
    assert code == 2 and "ends in .toml" in stderr
    code, _, stderr = run_cli("machines", "from-slurm", str(tmp_path / "absent.txt"), "-o", str(out))
    assert code == 2 and "absent.txt" in stderr


def test_machines_without_an_action_lists_the_presets():
    code, stdout, _ = run_cli("machines")
    assert code == 0 and stdout.startswith("eurora: ") and "from-slurm" not in stdout


# ------------------------------------------------------------------ values
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gpu:4", {"gpu": 4}),
        ("gpu:tesla:2(S:0-1)", {"gpu": 2}),
        ("(null)", {}),
        ("", {}),
        ("gpu:a100:2(S:0),gpu:v100:2(S:1)", {"gpu": 4}),
        ("gpu:2(S:0,1),mic:1", {"gpu": 2, "mic": 1}),
        ("gpu:no_consume:1", {"gpu": 1}),
        ("bandwidth:lustre:4K", {"bandwidth": 4096}),
        ("mps:400,gpu:1", {"gpu": 1, "mps": 400}),
    ],
)
def test_gres(text, expected):
    assert parse_gres(text) == expected


@pytest.mark.parametrize("text", ["gpu", "gpu:tesla", ":4", "gpu:-1", "4:gpu"])
def test_bad_gres_is_an_error_naming_it(text):
    with pytest.raises(ValueError, match=r"GRES|no count"):
        parse_gres(text)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30", 1800),
        ("30:15", 1815),
        ("02:00:00", 7200),
        ("1-00:00:00", 86400),
        ("2-12", 216000),
        ("1-02:30", 95400),
        ("UNLIMITED", None),
        ("infinite", None),
    ],
)
def test_slurm_times(text, seconds):
    assert parse_slurm_time(text) == seconds


@pytest.mark.parametrize("text", ["", "1:2:3:4", "1-", "abc", "-5", "1.5"])
def test_bad_slurm_times(text):
    with pytest.raises(ValueError, match="not a Slurm time"):
        parse_slurm_time(text)


def test_hostlists():
    names = expand_hostlist("rack[1-2]-n[01-02],login")
    assert names == ["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02", "login"]
    assert compress_hostlist([f"cn{i:03d}" for i in (1, 2, 3, 5, 7, 8)]) == "cn[001-003,005,007-008]"
    for bad in ("cn[1-", "cn]1[", "cn[3-1]", "cn[a-b]"):
        with pytest.raises(ValueError):
            expand_hostlist(bad)


# ------------------------------------------------------------------ listings
def test_multi_line_scontrol_records_are_read(tmp_path):
    path = write(
        tmp_path,
        "nodes.txt",
        "NodeName=n01 Arch=x86_64 CoresPerSocket=4",
        "   CPUAlloc=0 CPUTot=8 CPULoad=0.00",
        "   Gres=gpu:2",
        "   RealMemory=16384 AllocMem=0",
        "   OS=Linux 5.14.0 #1 SMP PREEMPT_DYNAMIC",
        "   Partitions=batch ",
        "",
        "NodeName=n02 Arch=x86_64 CoresPerSocket=4",
        "   CPUAlloc=0 CPUTot=8 Gres=(null) RealMemory=16384",
        "   Partitions=batch,long",
    )
    nodes, _ = read_slurm_nodes(path)
    assert [(n.name, n.cpus, n.memory_mb, n.gres, n.partitions, n.line) for n in nodes] == [
        ("n01", 8, 16384, (("gpu", 2),), ("batch",), 1),
        ("n02", 8, 16384, (), ("batch", "long"), 8),
    ]
    with pytest.raises(TraceFormatError, match=r"nodes.txt:4: node n01, field RealMemory: '16x'"):
        read_slurm_nodes(
            write(tmp_path, "nodes.txt", "NodeName=n01 CPUTot=8", "   Gres=gpu:2", "", "   RealMemory=16x")
        )


def test_cpuefctv_is_used_where_slurm_prints_it(tmp_path):
    path = write(tmp_path, "n.txt", node_line(extra=" CPUEfctv=6"))
    assert read_slurm_nodes(path)[0][0].cpus == 6


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        ([node_line(), node_line("n02", mem="lots")], r":2: node n02, field RealMemory: 'lots'"),
        ([node_line(cpus="0")], r":1: node n01, field CPUTot: '0' is not a whole number >= 1"),
        ([node_line(gres="gpu:tesla")], r":1: node n01, field Gres: 'gpu:tesla' has no count"),
        (["NodeName=n01 CPUTot=8 Partitions=a"], r":1: node n01: no RealMemory field"),
        ([node_line(), "Partitions=x"], r":2: expected a line starting with NodeName="),
        ([node_line(), node_line(cpus="16")], r":2: node n01 is listed on line 1 with 8 CPUs"),
        (["n01 8 16384 (null)"], r":1: expected 5 fields \(sinfo -N -h -o \"%N %c %m %G %P\""),
        (["n[01-04] 8+ 16384 (null) batch"], r":1: node n\[01-04\], field 2 \(%c, CPUs\): '8\+'.*sinfo -N"),
        (["n01 8 16384 gpu:x:y batch"], r":1: node n01, field 4 \(%G, GRES\): 'gpu:x:y' has no count"),
        (["n[01 8 16384 (null) batch"], r":1: field 1 \(%N, node name\)"),
        (["", "  "], r": no nodes"),
    ],
)
def test_bad_listings_name_file_line_and_field(tmp_path, lines, where):
    path = write(tmp_path, "nodes.txt", *lines)
    with pytest.raises(TraceFormatError, match=r"nodes.txt" + where):
        machine_from_slurm(path)


def test_bad_partition_files_name_file_line_and_field(tmp_path):
    nodes = write(tmp_path, "n.txt", node_line())
    for lines, where in (
        (["PartitionName=batch MaxTime=soon"], r"p.txt:1: partition batch, field MaxTime: 'soon'"),
        (["PartitionName=batch MaxTime=00:00:00"], r"p.txt:1: partition batch, field MaxTime: .* not > 0"),
        (["PartitionName=batch Nodes=n01"], r"p.txt:1: partition batch: no MaxTime field"),
        (["PartitionName=a MaxTime=1", "PartitionName=a MaxTime=2"], r"p.txt:2: partition a is listed twice"),
        ([""], r"p.txt: no partitions"),
    ):
        with pytest.raises(TraceFormatError, match=where):
            machine_from_slurm(nodes, write(tmp_path, "p.txt", *lines))


def test_sinfo_header_default_partition_and_node_lists(tmp_path):
    path = write(
        tmp_path,
        "sinfo.txt",
        "NODELIST CPUS MEMORY GRES PARTITION",
        "n[01-02] 8 16384 (null) batch*",
        "g01 16 65536 gpu:2 gpu",
        "n01 8 16384 (null) long",
    )
    built = machine_from_slurm(path)
    assert list(built.machine.queues) == ["batch", "long", "gpu"]
    assert built.node_names == (("n01", "n02"), ("g01",))
    assert built.machine.capacity.tolist() == [[8, 0, 16], [8, 0, 16], [16, 2, 64]]


def test_limits_without_a_partition_file_and_unlimited(tmp_path):
    nodes = write(tmp_path, "n.txt", node_line(parts="a,b"))
    m = machine_from_slurm(nodes).machine
    assert dict(m.queues) == {"a": (365 * 86400.0, 0.0), "b": (365 * 86400.0, 0.0)}
    m = machine_from_slurm(nodes, unlimited_s=7200).machine
    assert m.queues["a"] == (7200.0, 0.0)
    parts = write(tmp_path, "p.txt", "PartitionName=a MaxTime=1:00:00", "PartitionName=c MaxTime=5")
    built = machine_from_slurm(nodes, parts)
    assert dict(built.machine.queues) == {"a": (3600.0, 0.0), "b": (3600.0, 0.0)}
    notes = " ".join(built.notes)
    assert "without a node in n.txt: c" in notes and "not in p.txt: b" in notes
    with pytest.raises(InvalidConfigError, match="unlimited_s"):
        machine_from_slurm(nodes, unlimited_s=0)


def test_memory_gres_names_groups_and_exclusive(tmp_path):
    nodes = write(
        tmp_path,
        "n.txt",
        node_line("n01", mem="1", gres="fpga:2"),
        node_line("n02", mem="1"),
        node_line("n03", mem="1", gres="mic:2,gpu:1", parts=""),
    )
    parts = write(tmp_path, "p.txt", "PartitionName=batch MaxTime=60 OverSubscribe=EXCLUSIVE")
    built = machine_from_slurm(nodes, parts)
    m = built.machine
    assert m.resources == ("cores", "gpus", "mics", "fpga") and m.exclusive  # no mem_gb: RealMemory=1
    assert list(m.groups) == ["c8-m0g-fpga2", "c8-m0g", "c8-m0g-gpus1-mics2"]  # one prefix "n" for all
    assert m.capacity.tolist() == [[8, 0, 0, 2], [8, 0, 0, 0], [8, 1, 2, 0]]
    notes = " ".join(built.notes)
    assert "no mem_gb" in notes and "1 node was in no partition" in notes and "EXCLUSIVE" in notes


def test_a_machine_file_is_written_atomically(tmp_path, monkeypatch):
    out = tmp_path / "m.toml"
    out.write_text("old\n")

    def broken(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        slurm_machine_file(NODES, out)
    assert out.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["m.toml"]
