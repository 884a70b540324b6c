"""Real excerpts from public issues that observe misread (issue 32), each with the finding and the lever a
senior vLLM engineer insists on. The excerpts are in tests/data/excerpts/, their sources in
tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe import pipeline, report

EXCERPTS = Path(__file__).parent / "data" / "excerpts"


def _diagnose(name: str) -> dict:
    return report.to_dict(pipeline.diagnose_paths([EXCERPTS / name]))


def _ids(d: dict) -> list[str]:
    return [f["id"] for f in d["findings"] if f["severity"] in ("critical", "warning")]


def _text(name: str) -> str:
    return report.render(pipeline.diagnose_paths([EXCERPTS / name]), "text")


# ---------------------------------------------------------------- vLLM's own clean-up is no operator's stop


@pytest.mark.parametrize(
    "name",
    ["ray-cleanup-after-engine-dead-gpustack-2738.log", "ray-cleanup-after-pyarrow-crash-vllm-16259.log"],
)
def test_the_ray_executors_teardown_is_not_a_requested_stop(name: str) -> None:
    """The line "Shutting down Ray distributed executor … the expected termination process in Ray" is printed by the
    executor's shutdown(), whoever caused it: the EngineDeadError after it is the engine dying."""
    d = _diagnose(name)
    assert "engine_crashed" in _ids(d)
    assert "no problems found" not in _text(name).lower()


# ---------------------------------------------------------------- a paste cut inside the traceback


@pytest.mark.parametrize(
    "name",
    [
        "cut-traceback-no-cache-memory-v1-vllm-27508.log",
        "cut-traceback-no-cache-memory-v0-ray-vllm-16318.log",
    ],
)
def test_the_raising_source_line_of_a_cut_traceback_is_the_finding(name: str) -> None:
    """No "Traceback" header, no exception line: the innermost frame's `raise ValueError("No available memory
    for the cache blocks. "` (V1 kv_cache_utils, V0 worker.py) is what failed."""
    d = _diagnose(name)
    assert "no_kv_cache_memory" in _ids(d)
    (f,) = [f for f in d["findings"] if f["id"] == "no_kv_cache_memory"]
    assert "source line that raises it" in f["evidence"]


def test_a_full_traceback_counts_its_raise_and_exception_lines_once() -> None:
    corpus = Path(__file__).parent / "data" / "corpus"
    d = report.to_dict(pipeline.diagnose_paths([next(corpus.glob("051-*.log"))]))
    (f,) = [f for f in d["findings"] if f["id"] == "no_kv_cache_memory"]
    assert f["data"]["count"] == 1


@pytest.mark.parametrize(
    "name,blocks",
    [("v0-gpu-blocks-0-qanything-302.log", 0), ("v0-gpu-blocks-minus-1-vllm-184.log", -1)],
)
def test_v0_no_gpu_blocks_at_start_up_is_no_memory_for_the_kv_cache(name: str, blocks: int) -> None:
    """V0 logs "# GPU blocks: N" before it raises "No available memory for the cache blocks" (0.2 →; -1 and a
    negative-dimension tensor in 0.1.x): a paste that stops there has already failed."""
    d = _diagnose(name)
    (f,) = [f for f in d["findings"] if f["id"] == "no_kv_cache_memory"]
    assert f["severity"] == "critical" and f["data"]["gpu_blocks"] == blocks


# ---------------------------------------------------------------- advice a release can take


def test_a_release_before_vllm_serve_gets_the_api_server_command() -> None:
    """`vllm serve` (the `vllm` console script) first shipped in 0.5.2 (wheels 0.5.1 → 0.5.2); the engine
    banner without "(vX)" is 0.3.3 or older (0.4.0 added it): the paste-ready command is the api_server."""
    d = _diagnose("v0-3-kv-short-of-max-seq-len-fastchat-3177.log")
    assert d["command"].startswith(
        "python -m vllm.entrypoints.openai.api_server --model /data/models/qwen1.5-4b-chat "
    )
    assert "--max-model-len 29472" in d["command"] and "vllm serve" not in d["command"]


@pytest.mark.parametrize("log", ["021", "022"])
def test_a_0_2_stats_line_without_a_version_gets_the_api_server_command(log: str) -> None:
    """eval32d 021 (0.3.0-era, llm_engine.py:921) and 022 (0.2.x, llm_engine.py:645) show no version, but V0's
    stats line logged by llm_engine.py itself is 0.1.0 → 0.3.0 (0.3.1 moved it to metrics.py): `vllm serve`
    (0.5.2 →) did not exist, so the printed command is the module's."""
    path = Path(__file__).parent / "data" / "eval32d" / f"{log}.log"
    d = pipeline.diagnose_paths([path])
    assert d.instances[0].config.version_range.hi == (0, 3, 0)
    text = report.render(d, "text")
    assert "python -m vllm.entrypoints.openai.api_server --model MODEL --gpu-memory-utilization" in text
    assert "vllm serve" not in text and "vllm serve" not in report.to_dict(d)["command"]


@pytest.mark.parametrize(
    ("loggers", "fmts", "hi"),
    [
        (["llm_engine.py"], ["v0"], (0, 3, 0)),  # 0.1.0 → 0.3.0
        (["metrics.py"], ["v0"], (0, 10, 99)),  # 0.3.1 → 0.10: V0's own bound only
        (["llm_engine.py"], ["v0", "v1"], None),  # with V1 lines: a fork's, no bound from the file
    ],
)
def test_the_stats_lines_logger_file_bounds_the_release(loggers: list, fmts: list, hi: tuple | None) -> None:
    from observe import versions

    r = versions.infer_range(None, stats_formats=fmts, stats_loggers=loggers)
    assert r.hi == hi and r.lo in (None, (0, 7, 0))


_MODULE = "python -m vllm.entrypoints.openai.api_server --model m"


@pytest.mark.parametrize(
    ("rng", "launcher", "program"),
    [
        (((0, 2, 0), (0, 3, 0)), None, _MODULE),  # before 0.5.2
        (((0, 5, 1), (0, 5, 1)), None, _MODULE),  # the last
        ((None, (0, 3, 0)), "api_server", _MODULE),
        (((0, 5, 2), (0, 5, 2)), None, "vllm serve m"),  # the first with `vllm serve`
        (((0, 6, 0), None), "api_server", "vllm serve m"),  # known to have it: the module form is deprecated
        ((None, (0, 10, 99)), "api_server", _MODULE),  # as launched
        ((None, (0, 10, 99)), None, "vllm serve m"),  # unknown, nothing says otherwise
        ((None, None), None, "vllm serve m"),
    ],
)
def test_the_command_form_follows_what_is_known_of_the_release(
    rng: tuple, launcher: str | None, program: str
) -> None:
    """`vllm serve` is the `vllm` console script (vllm/scripts.py, `[console_scripts] vllm = vllm.scripts:main`),
    first in the 0.5.2 wheel; 0.4.0, 0.4.3, 0.5.0.post1 and 0.5.1 ship only vllm/entrypoints/openai/api_server.py."""
    from observe import advise
    from observe.model import EngineConfig
    from observe.versions import VersionRange

    cfg = EngineConfig(model="m", version_range=VersionRange(*rng, ("test",)), launcher=launcher)
    cmd = advise.command_line(cfg, [])
    assert cmd == program or cmd.startswith(program + " ")


def test_an_unversioned_engine_banner_bounds_the_release() -> None:
    inst = pipeline.diagnose_paths([EXCERPTS / "v0-gpu-blocks-0-qanything-302.log"]).instances[0]
    r = inst.config.version_range
    assert r.hi == (0, 3, 3) and r.lo is None
    assert any("without '(vX)'" in e for e in r.evidence)


# ---------------------------------------------------------------- the OOM's lever for its phase


def test_one_allocation_larger_than_the_free_memory_gets_a_smaller_batch_never_eager() -> None:
    """74.16 GiB asked with 29.89 of 44.40 GiB free: one tensor sized by the batch; neither eager mode nor a
    lower utilization shrinks it. The share is the allocation's: 29.89 / (74.16 × 1.2) → 33 %."""
    text = _text("one-large-allocation-oom-dots-ocr-196.log")
    assert "first step: --max-num-batched-tokens to at most 33 % of the value in force" in text
    assert "--enforce-eager and a lower --gpu-memory-utilization do not shrink" in text
    assert "memory is fragmented" not in text  # 0.72 GiB reserved-unallocated cannot serve 74 GiB
    assert "Command:" not in text  # no flag changes without the values in force


def test_the_sampler_warm_up_oom_gets_fewer_sequences_sized_from_its_allocation() -> None:
    """V1's _dummy_sampler_run (`sampling_metadata=dummy_metadata`): 786 MiB of logits, one row per
    sequence, with 141 MiB free → at most 0.137 / (0.768 × 1.2) = 14 % of --max-num-seqs."""
    d = _diagnose("v1-sampler-warmup-oom-vllm-27508.log")
    (f,) = [f for f in d["findings"] if f["id"] == "cuda_oom"]
    assert f["data"]["phase"] == "sampler_warmup"
    text = _text("v1-sampler-warmup-oom-vllm-27508.log")
    assert "first step: --max-num-seqs to at most 14 % of the value in force" in text
    assert "enforce-eager" not in text


def test_with_the_value_in_force_the_batch_is_cut_to_what_fits() -> None:
    from observe import advise
    from observe.model import EngineConfig, Finding

    data = dict(
        tried_to_allocate_gib=74.16, free_gib=29.89, total_capacity_gib=44.40, process_in_use_gib=14.51
    )
    cfg = EngineConfig(engine="v1", version="0.11.0", device="GPU", max_num_batched_tokens=16384)
    plan = advise.plan(cfg, [Finding(id="cuda_oom", severity="critical", title="t", evidence="e", data=data)])
    r = plan.recommendations[0]
    assert (r.flag, r.suggested) == ("--max-num-batched-tokens", 16384 * 29.89 / (74.16 * 1.2) // 8 * 8)
    assert not any(x.flag == "--enforce-eager" for x in plan.recommendations)


@pytest.mark.parametrize(
    "name", ["unknown-flag-temperature-ramalama-2635.log", "unknown-flag-temperature-ramalama-758.log"]
)
def test_an_unknown_sampling_flag_is_removed_and_placed_where_it_belongs(name: str) -> None:
    """argparse's "unrecognized arguments: --temperature 0.8": no value of --temperature passes; it is a
    sampling parameter (per request), or the server's default through --override-generation-config
    (0.7.1 →; the log names no release)."""
    d = _diagnose(name)
    assert "launch_rejected" in _ids(d)
    text = _text(name)
    assert "this vLLM has no --temperature flag: remove it and its value 0.8" in text
    assert 'send it with each request ("temperature": 0.8)' in text
    assert "--override-generation-config '{\"temperature\": 0.8}' (0.7.1 →)" in text
    assert "to a value that passes" not in text


@pytest.mark.parametrize(
    "name,asked,limit,key",
    [
        ("derived-max-model-len-wrapped-xinference-1715.log", 4096, 2048, "seq_length"),
        ("derived-max-model-len-none-qanything-457.log", 4096, 2048, "its context length"),
        ("derived-max-model-len-longvt-9.log", 131072, 32768, "max_position_embeddings"),
    ],
)
def test_an_error_naming_the_models_limit_gets_that_value(
    name: str, asked: int, limit: int, key: str
) -> None:
    """ "User-specified max_model_len (A) is greater than the derived max_model_len (key=L …)": wrapped by
    another server ([address=…, pid=…]), in 0.3's wording (None=L) or a pydantic "Value error, …" line."""
    d = _diagnose(name)
    (r,) = [r for r in d["recommendations"] if r["flag"] == "--max-model-len"]
    assert (r["current"], r["suggested"]) == (asked, limit)
    assert f"({key} in its config.json)" in r["reason"]
    assert f"--max-model-len {limit}" in d["command"]


# ---------------------------------------------------------------- numbers and phases read right


@pytest.mark.parametrize(
    "name", ["serving-crash-engine-dead-vllm-15100.log", "ray-cleanup-after-engine-dead-gpustack-2738.log"]
)
def test_a_request_failed_by_the_dead_engine_dates_the_crash_to_serving(name: str) -> None:
    """V1 async_llm's "Request X failed (engine dead).": a request was in flight, so the engine had started;
    the EngineDeadError before it is a crash while serving, never "Engine failed to start" (startup)."""
    d = _diagnose(name)
    assert _ids(d) == ["engine_crashed"]
    (f,) = d["findings"]
    assert f["data"]["phase"] == "serving" and f["data"]["count"] == 1
    assert "(startup)" not in _text(name)
