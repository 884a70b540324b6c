"""The advisor's rules for every lever (a value already in force, version gates, vLLM's defaults, the
command line) on event sequences shaped like real vLLM output; the family tests are in tests/rules/."""

from __future__ import annotations

import shlex

from observe import advise, diagnosis
from observe.model import EngineConfig, Finding
from tests.rules.rulekit import fact, flags, recs, stats


def test_a_flag_already_at_the_value_is_never_suggested() -> None:
    evs = [
        fact("engine", "v1"),
        fact("version", "0.10.1"),
        flags(gpu_memory_utilization=0.95, kv_cache_dtype="fp8", max_num_seqs=32),
    ]
    evs += [stats(i, running=32, waiting=20, kv=99.0) for i in range(6)]
    r = recs(diagnosis.analyze_instance("x", evs))
    assert "--gpu-memory-utilization" not in r and "--kv-cache-dtype" not in r


def test_version_gates_flags() -> None:
    old = EngineConfig(version="0.2.7", engine="v0")
    assert not advise.flag_supported("--kv-cache-dtype", old)
    assert advise.flag_supported("--swap-space", old)
    new = EngineConfig(version="0.12.0", engine="v1")
    assert not advise.flag_supported("--swap-space", new)
    assert advise.flag_supported("--kv-cache-memory-bytes", new)
    assert not advise.flag_supported("--kv-cache-memory-bytes", EngineConfig(version="0.9.2", engine="v1"))
    assert not advise.flag_supported("--kv-cache-memory-bytes", EngineConfig())  # too new to guess


def test_defaults_come_from_vllm_by_release() -> None:
    from observe.flags import known

    assert known.default("--gpu-memory-utilization", EngineConfig(version="0.32.0")) == 0.92
    assert known.default("--gpu-memory-utilization", EngineConfig(version="0.10.1")) == 0.9
    assert known.default("--gpu-memory-utilization", EngineConfig()) is None  # unknown, not "default"
    assert not known.valid_value("--kv-cache-dtype", "fp8", EngineConfig(version="0.3.3"))
    assert known.valid_value("--kv-cache-memory-bytes", "16M", EngineConfig(version="0.32.0"))


def test_old_v0_gets_no_fp8_suggestion() -> None:
    evs = [fact("engine", "v0"), fact("version", "0.2.7")]
    evs += [stats(i, running=4, waiting=3, kv=99.0, fmt="v0") for i in range(5)]
    r = recs(diagnosis.analyze_instance("x", evs))
    assert "--kv-cache-dtype" not in r and "--gpu-memory-utilization" in r


def test_command_line_is_shell_quoted() -> None:
    cfg = EngineConfig(
        model="$(touch /tmp/pwned)", flags={"--served-model-name": ["a b"], "--enforce-eager": True}
    )
    rec = advise.Recommendation(
        flag="--max-num-seqs", current=None, suggested=64, reason="r", finding_ids=("f",)
    )
    cmd = advise.command_line(cfg, [rec])
    argv = shlex.split(cmd)
    assert argv[:3] == ["vllm", "serve", "$(touch /tmp/pwned)"]
    assert argv[argv.index("--served-model-name") + 1] == "a b"
    assert "--enforce-eager" in argv and argv[argv.index("--max-num-seqs") + 1] == "64"


def test_unknown_finding_produces_no_recommendation() -> None:
    f = Finding(id="something_else", severity="warning", title="t", evidence="e")
    assert advise.advise(EngineConfig(), [f]) == []
