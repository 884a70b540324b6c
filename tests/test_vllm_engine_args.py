"""The flag vocabulary generated from vLLM wheels (tools/vllm_engine_args.py; the per-release
extracts in tests/data/vllm-engine-args/, provenance in tests/data/PROVENANCE.md)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from observe.flags import vllmflags as F

ROOT = Path(__file__).resolve().parents[1]
RELEASES = sorted((ROOT / "tests" / "data" / "vllm-engine-args").glob("vllm-*.json"))


def tool():
    spec = importlib.util.spec_from_file_location("vllm_engine_args", ROOT / "tools" / "vllm_engine_args.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_flags_json_is_the_tools_output() -> None:
    t = tool()
    rels = [json.loads(p.read_text()) for p in RELEASES]
    text = t.render(t.merge(rels, json.loads(t.FLAGS_JSON.read_text())))
    assert text == t.FLAGS_JSON.read_text(), (
        "observe/data/vllm_flags.json drifted: python tools/vllm_engine_args.py --merge tests/data/vllm-engine-args/vllm-*.json"
    )


def test_each_extract_is_one_wheel() -> None:
    assert [json.loads(p.read_text())["version"] for p in RELEASES] == [
        "0.30.0",
        "0.31.0",
        "0.32.0",
        "0.33.0",
        "0.34.0",
    ]
    for p in RELEASES:
        d = json.loads(p.read_text())
        assert len(d["sha256"]) == 64 and d["wheel"].startswith(f"vllm-{d['version']}-")
        assert len(d["fields"]) > 200


def test_every_tuning_field_of_033_is_in_the_vocabulary() -> None:
    d = json.loads((ROOT / "tests" / "data" / "vllm-engine-args" / "vllm-0.33.0.json").read_text())
    tuning = [f["flag"] for f in d["fields"] if f["category"]]
    assert len(tuning) >= 60
    missing = [f for f in tuning if F.has_flag(f, "0.33.0") is not True]
    assert missing == []


@pytest.mark.parametrize(
    ("flag", "area"),
    [
        ("--max-cudagraph-capture-size", "cuda_graphs"),
        ("--enforce-eager", "cuda_graphs"),
        ("--kv-offloading-size", "kv_offload"),
        ("--kv-transfer-config", "kv_offload"),
        ("--prefix-caching-hash-algo", "prefix_caching"),
        ("--enable-prefix-caching", "prefix_caching"),
        ("--max-num-seqs", "batching"),
        ("--prefill-schedule-interval", "scheduling"),
        ("--gpu-memory-utilization", "memory"),
    ],
)
def test_categories(flag: str, area: str) -> None:
    assert area in F.categories(flag)
    assert flag in F.flags_in(area)


def test_metrics_flags_change_nothing() -> None:
    assert F.categories("--kv-cache-metrics") == []


def test_generated_flag_is_unknown_outside_its_releases() -> None:
    # read in 0.30–0.33 only: an older release is not "absent", it is unknown
    assert F.has_flag("--prefill-schedule-interval", "0.33.0") is True
    assert F.has_flag("--prefill-schedule-interval", "0.31.0") is True
    assert F.has_flag("--prefill-schedule-interval", "0.20.0") is None
    assert F.default("--prefill-schedule-interval", "0.33.0") == 1
    assert F.default("--prefill-schedule-interval", "0.25.0") is None
    # a hand-read flag keeps its history back to 0.1.7
    assert F.has_flag("--gpu-memory-utilization", "0.2.0") is True


def test_extract_reads_a_wheel(tmp_path: Path) -> None:
    """Step 1 on a wheel-shaped zip of EngineArgs and one config class, the way vLLM writes them."""
    import zipfile

    whl = tmp_path / "vllm-9.9.0-cp38-abi3-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr(
            "vllm/config/scheduler.py",
            "class SchedulerConfig:\n    max_num_seqs: int | None = None\n"
            "    prefill_schedule_interval: int = Field(default=1, ge=1)\n",
        )
        z.writestr(
            "vllm/engine/arg_utils.py",
            "class EngineArgs:\n    max_num_seqs: int | None = SchedulerConfig.max_num_seqs\n"
            "    prefill_schedule_interval: int = get_field(SchedulerConfig, 'prefill_schedule_interval')\n"
            "    served_model_name: str | None = None\n",
        )
        z.writestr("vllm-9.9.0.dist-info/METADATA", "Name: vllm\n")
    d = tool().extract(whl)
    by = {f["flag"]: f for f in d["fields"]}
    assert d["version"] == "9.9.0"
    assert by["--prefill-schedule-interval"]["default"] == 1
    assert by["--prefill-schedule-interval"]["config"] == "SchedulerConfig"
    assert by["--max-num-seqs"]["category"] == ["batching", "scheduling"]
    assert by["--served-model-name"]["category"] == []
