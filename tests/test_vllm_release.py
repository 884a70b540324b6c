"""observe's release data as tools/vllm_release.py reads it from vLLM's wheels (issue 33): the
committed data is the tool's output on the committed extracts (tests/data/vllm-engine-args,
vllm-metrics, vllm-logs; provenance in tests/data/PROVENANCE.md), and vLLM 0.34.0's facts are in it."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

from observe.capacity import defaults
from observe.flags import vllmflags as F
from observe.metrics import names

ROOT = Path(__file__).resolve().parents[1]
NEW_FLAGS = (
    "--enable-extensible-kv-cache",
    "--cache-aware-admission-threshold",
    "--cache-aware-admission-window",
    "--max-num-inflight-kv-loads",
    "--checkpoint-prepare-on-startup",
    "--shuffle-safetensors-files",
)
NEW_METRICS = (
    "vllm:kv_offload_tiering_deferred_release_chunks",
    "vllm:kv_offload_tiering_deferred_release_hold_seconds",
    "vllm:request_render_duration_seconds",
)
DIFFUSION = (
    "vllm:diffusion_num_denoising_steps_total",
    "vllm:diffusion_num_canvas_positions_total",
    "vllm:diffusion_num_committed_tokens_total",
)


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("vllm_release", ROOT / "tools" / "vllm_release.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_committed_data_is_the_tools_output_on_the_committed_extracts(tool) -> None:
    flags, recent, notes = tool.build(json.loads(tool.ARGS.FLAGS_JSON.read_text()))
    assert flags == tool.ARGS.FLAGS_JSON.read_text(), "run tools/vllm_release.py on the newest wheel"
    assert recent == tool.NAMES_RECENT.read_text()
    assert notes == []  # nothing left to read by hand
    assert tool.main(["--check"]) == 0


def test_every_extract_is_of_a_release_the_data_read(tool) -> None:
    read = F._data()["_meta"]["versions_read"]
    for folder in (tool.ARGS_DIR, tool.METRICS_DIR, tool.LOGS_DIR):
        for p in folder.glob("vllm-*.json"):
            assert p.stem.removeprefix("vllm-") in read, p
    assert read[-1] == "0.34.0"


@pytest.mark.parametrize("flag", NEW_FLAGS)
def test_034s_new_flags_are_known(flag: str) -> None:
    assert F.has_flag(flag, "0.34.0") is True
    assert F.has_flag(flag, "0.33.0") is False
    assert F.introduced(flag) == "0.34.0"
    assert F.categories(flag)


def test_034s_memory_default_is_1_with_the_extensible_kv_cache_and_092_without() -> None:
    assert F.gpu_memory_utilization("0.33.0") == 0.92
    assert F.gpu_memory_utilization("0.34.0") == 1.0
    assert F.gpu_memory_utilization("0.34.0", extensible_kv_cache=False) == 0.92
    assert F.gpu_memory_utilization("0.34.0", device="CPU") == 0.92
    assert defaults.gpu_memory_utilization("0.34.0") == 1.0
    assert defaults.gpu_memory_utilization("0.34.0", extensible_kv_cache=False) == 0.92
    assert defaults.gpu_memory_utilization("0.33.0") == 0.92
    src = F.flag_entries()["--gpu-memory-utilization"]["effective_default"][0]["source"]
    assert "vllm/config/cache.py @ v0.34.0" in src


def test_034s_block_size_starts_at_64() -> None:
    assert defaults.block_size("0.33.0") == 16
    assert defaults.block_size("0.34.0") == 64


def test_capacity_on_an_h100_with_034_no_longer_sizes_with_092() -> None:
    from click.testing import CliRunner

    from observe.cli import command

    args = ["capacity", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "H100", "--format", "json"]
    got = {}
    for v in ("0.33.0", "0.34.0"):
        r = CliRunner().invoke(command(), [*args, "--vllm-version", v], prog_name="observe")
        assert r.exit_code == 0, r.output
        got[v] = json.loads(r.stdout)
    util = {v: d["gpu_memory_utilization"] for v, d in got.items()}
    assert util == {"0.33.0": 0.92, "0.34.0": 1.0}
    assert {v: d["block_size"] for v, d in got.items()} == {"0.33.0": 16, "0.34.0": 64}


@pytest.mark.parametrize("metric", NEW_METRICS + DIFFUSION)
def test_new_and_tuple_defined_metrics_are_in_the_catalog(metric: str) -> None:
    assert names.canonical(metric) == metric
    assert names.is_known_family(metric.removesuffix("_total"))


def test_a_metric_defined_in_a_tuple_is_found(tool) -> None:
    """vLLM 0.33's own source (vllm/v1/spec_decode/metrics.py lines 198-246): the names sit in
    (name, doc) tuples that a comprehension passes to the counter class as name=name."""
    src = (ROOT / "tests" / "data" / "vllm-source" / "spec_decode_metrics-0.33.0.py.txt").read_text()
    import textwrap

    found, _ = tool.METRICS.extract(
        {"metrics.py": "class X:\n" + textwrap.indent(textwrap.dedent(src), "    ")}
    )
    got = {m["name"]: m["type"] for m in found}
    assert {n: "counter" for n in DIFFUSION}.items() <= got.items()
    assert got["vllm:diffusion_num_denoising_steps_total"] == "counter"


def test_the_wordings_the_parser_lost_in_034_are_named(tool) -> None:
    moved = tool.moved_wordings()
    assert any("phase-load-start" in m and "gone" in m and m.startswith("0.34.0") for m in moved), moved
    logs = json.loads((tool.LOGS_DIR / "vllm-0.34.0.json").read_text())
    assert logs["wordings"]["kv-cache-size"], "the KV-cache size line is still in 0.34's source"


def test_the_pypi_check_names_a_release_the_data_lacks(tool, monkeypatch, capsys) -> None:
    """`pip index versions vllm` prints `vllm (X)` first; a newer X than the data read is exit 1."""
    newest = F._data()["_meta"]["versions_read"][-1]
    major, minor, _ = newest.split(".")
    for shown, rc in ((newest, 0), (f"{major}.{int(minor) + 1}.0", 1)):
        out = f"vllm ({shown})\nAvailable versions: {shown}, {newest}\n"
        monkeypatch.setattr(
            tool.subprocess, "run", lambda *a, out=out, **k: subprocess.CompletedProcess(a, 0, out, "")
        )
        assert tool.main(["--pypi"]) == rc
        assert shown in capsys.readouterr().out


def test_the_advisor_does_not_lower_034s_unset_utilization() -> None:
    """A full KV cache with requests waiting: on 0.33 the plan raises the unset utilization (0.92) to
    Settings.max_gpu_util; on 0.34 unset means 1.0 with the extensible KV cache, which 0.95 would lower."""
    from observe import diagnosis
    from tests.rules.rulekit import fact, flags, recs, stats

    def advice(version: str) -> dict:
        evs = [fact("engine", "v1"), fact("version", version), flags(max_num_seqs=32)]
        evs += [stats(i, running=32, waiting=20, kv=99.0) for i in range(6)]
        return recs(diagnosis.analyze_instance("x", evs))

    assert "--gpu-memory-utilization" in advice("0.33.0")
    assert "--gpu-memory-utilization" not in advice("0.34.0")


def test_the_lowest_utilization_default_is_below_every_releases() -> None:
    """The OOM step with the value in force and the release both unknown (advise.oom._util_step) is taken
    below this: 0.9 (0.1.7 → 0.19), never above what any read release defaults to (0.92, 1.0 later)."""
    low = defaults.lowest_gpu_memory_utilization()
    every = [defaults.gpu_memory_utilization(".".join(map(str, v))) for v in F.versions_read()]
    assert low == 0.9 and low == min(every) and max(every) > low
