"""Every failure wording vLLM has printed, one golden line each, read from vLLM's own source release
by release (``pip download --no-deps vllm==X``; the raise / log site is named in each row), in the
prefixes the engine prints them with: PyTorch's "[rank0]:", "(VllmWorker rank=N pid=M)",
"(RayWorkerWrapper pid=M)", "(EngineCore_DP0 pid=M)", "(Worker_TP1 pid=M)".

Each line is also kept verbatim in tests/data/forms/failure-forms.log (so that the trigger tests see
it); provenance in tests/data/PROVENANCE.md. Each row names the failure kind the parser must read off
the line alone and details it must carry: change the rule and the row fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest

from observe.model import EngineError
from observe.parse import parse_text

FORMS = Path(__file__).parent / "data" / "forms" / "failure-forms.log"


class Form(NamedTuple):
    release: str
    source: str  # vLLM (or PyTorch) file that prints it
    line: str
    kind: str
    details: dict[str, Any]


_TORCH_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 has a total capacity of "
    "23.57 GiB of which 105.06 MiB is free. Including non-PyTorch memory, this process has 23.46 GiB memory in "
    "use. Of the allocated memory 22.95 GiB is allocated by PyTorch, and 184.43 MiB is reserved by PyTorch but "
    "unallocated."
)

ROWS: tuple[Form, ...] = (
    # ---------------------------------------------------------------- out of memory
    Form(
        "0.2.7 (torch 2.1)",
        "torch c10/cuda/CUDACachingAllocator.cpp via vllm/worker/worker.py",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total "
        "capacity; 75.02 GiB already allocated; 1.01 GiB free; 76.50 GiB reserved in total by PyTorch)",
        "oom",
        {"device": "CUDA", "gpu": 0, "tried_to_allocate_gib": 2.0, "total_capacity_gib": 79.15},
    ),
    Form(
        "0.6.3 → 0.32 (torch ≥ 2.4)",
        "torch c10/cuda/CUDACachingAllocator.cpp",
        _TORCH_OOM,
        "oom",
        {
            "device": "CUDA",
            "gpu": 0,
            "free_gib": pytest.approx(0.102598, abs=1e-4),
            "total_capacity_gib": 23.57,
        },
    ),
    Form(
        "0.6.3 → 0.32, torchrun / multiproc rank prefix",
        "torch.distributed (every line of a rank's traceback prefixed)",
        "[rank0]: " + _TORCH_OOM,
        "oom",
        {"device": "CUDA", "gpu": 0, "rank": 0},
    ),
    Form(
        "0.4 → 0.32, CUDA-graph capture",
        "vllm/worker/model_runner.py capture_model / v1/worker/gpu_model_runner.py capture_model",
        "[rank1]: RuntimeError: CUDA error: out of memory",
        "oom",
        {"device": "CUDA", "rank": 1},
    ),
    Form(
        "0.6 → 0.32 on ROCm",
        "torch c10/hip (HIP caching allocator)",
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of "
        "191.98 GiB of which 512.00 MiB is free.",
        "oom",
        {"device": "HIP", "gpu": 0, "tried_to_allocate_gib": 1.0},
    ),
    Form(
        "0.6 → 0.32 on ROCm, a full GPU",
        "torch c10/hip (format_size prints bytes below 1 KiB)",
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "191.98 GiB of which 0 bytes is free.",
        "oom",
        {"device": "HIP", "free_gib": 0.0, "total_capacity_gib": 191.98},
    ),
    Form(
        "0.6 → 0.32 on ROCm, graph capture",
        "vllm/worker/model_runner.py capture_model",
        "RuntimeError: HIP error: out of memory",
        "oom",
        {"device": "HIP"},
    ),
    Form(
        "0.8.5 (V1 worker in a multiproc executor)",
        "vllm/v1/executor/multiproc_executor.py (worker traceback)",
        "(VllmWorker rank=2 pid=4242) ERROR 05-12 10:11:12 [multiproc_executor.py:470] " + _TORCH_OOM,
        "oom",
        {"device": "CUDA", "rank": 2},
    ),
    Form(
        "0.10 → 0.11 (V1, TP worker process name)",
        "vllm/v1/executor/multiproc_executor.py",
        "(Worker_TP1 pid=5151) ERROR 10-02 08:00:01 [multiproc_executor.py:654] " + _TORCH_OOM,
        "oom",
        {"device": "CUDA", "rank": 1},
    ),
    # ---------------------------------------------------------------- a request longer than the model length
    Form(
        "0.2 → 0.6 (V0 scheduler)",
        "vllm/core/scheduler.py",
        "WARNING 02-28 21:48:18 scheduler.py:195] Input prompt (5000 tokens) is too long and exceeds limit of 4096",
        "prompt_too_long",
        {"prompt_tokens": 5000, "limit": 4096},
    ),
    Form(
        "0.2.7 (OpenAI server)",
        "vllm/entrypoints/openai/api_server.py",
        "ValueError: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
        "(4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
        "prompt_too_long",
        {"prompt_tokens": 5000, "limit": 4096},
    ),
    Form(
        "0.10 → 0.11 (OpenAI server)",
        "vllm/entrypoints/openai/serving_engine.py, vllm/entrypoints/renderer.py",
        "(APIServer pid=7) ERROR 10-02 08:00:01 [serving_chat.py:222] Error in preprocessing prompt inputs: "
        "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. "
        "Please reduce the length of the input messages.",
        "prompt_too_long",
        {"prompt_tokens": 5000, "limit": 4096},
    ),
    Form(
        "0.32 (renderer)",
        "vllm/renderers/params.py",
        "vllm.exceptions.VLLMValidationError: This model's maximum context length is 4096 tokens. However, your "
        "prompt contains at least 4097 input tokens, which exceeds this limit even without any output tokens. "
        "Please reduce the length of the input prompt.",
        "prompt_too_long",
        {"prompt_tokens": 4097, "limit": 4096},
    ),
    Form(
        "0.8.5 → 0.11 (V1 processor; V0 llm_engine)",
        "vllm/v1/engine/processor.py, vllm/engine/llm_engine.py",
        "ValueError: The decoder prompt (length 9000) is longer than the maximum model length of 8192. "
        "Make sure that `max_model_len` is no smaller than the number of text tokens.",
        "prompt_too_long",
        {"prompt_tokens": 9000, "limit": 8192},
    ),
    Form(
        "0.32 (V1 input processor)",
        "vllm/v1/engine/input_processor.py",
        "vllm.exceptions.VLLMValidationError: The decoder prompt (length 4096) plus the number of requested "
        "output tokens (at least 1) is longer than the maximum model length of 4096. Make sure that "
        "`max_model_len` is no smaller than the number of text tokens (prompt + requested output tokens).",
        "prompt_too_long",
        {"prompt_tokens": 4096, "limit": 4096},
    ),
    # ---------------------------------------------------------------- KV cache too small / no memory for it
    Form(
        "0.2 → 0.10 (V0 worker)",
        "vllm/worker/worker.py raise_if_cache_size_invalid",
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be "
        "stored in KV cache (20000). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine.",
        "max_seq_len_exceeds_kv",
        {"max_seq_len": 32768, "kv_tokens": 20000},
    ),
    Form(
        "0.8.5 → 0.11 (V1)",
        "vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory",
        "(EngineCore_DP0 pid=900) ValueError: To serve at least one request with the models's max seq len "
        "(32768), (4.00 GiB KV cache is needed, which is larger than the available KV cache memory (2.50 GiB). "
        "Based on the available memory, the estimated maximum model length is 20480. Try increasing "
        "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        "kv_needed_exceeds_available",
        {
            "max_model_len": 32768,
            "kv_needed_gib": 4.0,
            "kv_available_gib": 2.5,
            "estimated_max_model_len": 20480,
        },
    ),
    Form(
        "0.2.7 (V0 engine), 0.8.5 (V0 worker and V1)",
        "vllm/engine/llm_engine.py, vllm/worker/worker.py, vllm/v1/core/kv_cache_utils.py",
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
        "initializing the engine.",
        "no_available_memory",
        {},
    ),
    Form(
        "0.4 → 0.10 (Ray workers)",
        "vllm/executor/ray_gpu_executor.py (worker output relayed by Ray)",
        "(RayWorkerWrapper pid=3131, ip=10.0.0.2) ValueError: No available memory for the cache blocks. "
        "Try increasing `gpu_memory_utilization` when initializing the engine.",
        "no_available_memory",
        {},
    ),
    # ---------------------------------------------------------------- the engine died or hangs
    Form(
        "0.32",
        "vllm/v1/engine/core_client.py (MPClient monitor)",
        "(APIServer pid=22188) WARNING 11-29 18:43:29 [core_client.py:817] [shutdown] MPClient: engine core "
        "exited unexpectedly; starting cleanup",
        "engine_crashed",
        {"form": "mpclient_exited"},
    ),
    Form(
        "0.8 → 0.11",
        "vllm/v1/engine/core_client.py (engine core monitor)",
        "ERROR 10-02 08:00:01 [core_client.py:564] Engine core proc EngineCore_0 died unexpectedly, shutting "
        "down client.",
        "engine_crashed",
        {"form": "proc_died", "process": "EngineCore_0"},
    ),
    Form(
        "0.32",
        "vllm/v1/executor/multiproc_executor.py (worker monitor)",
        "(EngineCore pid=22210) ERROR 11-29 18:43:29 [multiproc_executor.py:316] Worker proc VllmWorker-0 died "
        "unexpectedly (exit code: -9), shutting down executor.",
        "engine_crashed",
        {"form": "proc_died", "process": "VllmWorker-0", "exit_code": -9, "signal": "SIGKILL"},
    ),
    Form(
        "0.6.3 (V0 MQLLMEngine)",
        "vllm/entrypoints/launcher.py",
        "CRITICAL 10-17 11:00:00 launcher.py:99] MQLLMEngine is already dead, terminating server process",
        "engine_crashed",
        {"form": "already_dead"},
    ),
    Form(
        "0.6.3 → 0.7",
        "vllm/distributed/device_communicators/shm_broadcast.py",
        "WARNING 10-17 11:00:00 shm_broadcast.py:342] No available block found in 60 second. ",
        "engine_hang",
        {"seconds": 60},
    ),
    Form(
        "0.10 → 0.11",
        "vllm/distributed/device_communicators/shm_broadcast.py",
        "(EngineCore_DP0 pid=900) INFO 10-02 08:00:01 [shm_broadcast.py:466] No available shared memory "
        "broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing "
        "some time-consuming work (e.g. compilation)",
        "engine_hang",
        {"seconds": 60, "process": "EngineCore_DP0"},
    ),
    Form(
        "0.32",
        "vllm/distributed/device_communicators/shm_broadcast.py (LONG_WAIT_TIME_LOG_MSG)",
        "(EngineCore pid=9) INFO 11-29 18:43:29 [shm_broadcast.py:750] No available shared memory broadcast "
        "block found in 60 seconds. This typically happens when some processes are hanging or doing some "
        "time-consuming work (e.g. compilation, weight/kv cache quantization).",
        "engine_hang",
        {"seconds": 60},
    ),
    # ---------------------------------------------------------------- the catch-all
    Form(
        "any",
        "any logger.error / logger.exception site no rule knows",
        "(APIServer pid=7) ERROR 10-02 08:00:01 [serving_chat.py:180] Something nobody has written a rule for",
        "error_line",
        {"phase": "serving"},  # logged by a request handler (observe.parse.served): the server was serving
    ),
    Form(
        "any, rank-prefixed",
        "a worker's uncaught exception",
        "[rank3]: AssertionError: Attempted to load weight (torch.Size([128])) into parameter (torch.Size([64]))",
        "exception",
        {"type": "AssertionError", "rank": 3},
    ),
)


def _errors(line: str) -> list[EngineError]:
    return [e for e in parse_text(line, year=2025) if isinstance(e, EngineError)]


@pytest.mark.parametrize("form", ROWS, ids=lambda f: f"{f.kind}:{f.release}")
def test_form_is_read(form: Form) -> None:
    errs = _errors(form.line)
    assert errs, f"no failure read off {form.line!r}"
    e = errs[0]
    assert e.kind == form.kind, (e.kind, e.details)
    for k, v in form.details.items():
        assert e.details.get(k) == v, (k, e.details)


def test_forms_kept_in_the_data_file() -> None:
    """Every golden line is in tests/data/forms/failure-forms.log, verbatim, once (the trigger tests
    read that file)."""
    lines = FORMS.read_text(encoding="utf-8").splitlines()
    for f in ROWS:
        assert lines.count(f.line) == 1, f.line


def test_rank_prefixed_traceback_lines_are_vllm_lines() -> None:
    """Every line of a rank-prefixed traceback is a vLLM line: a paste of nothing else still reads."""
    from observe.model import LogLine
    from observe.parse import Parser

    text = [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/usr/lib/python3.12/site-packages/vllm/worker/model_runner.py", line 1, in f',
        "[rank0]:     x = torch.empty(n)",
        "[rank0]: " + _TORCH_OOM,
    ]
    p = Parser(year=2025)
    evs = [e for i, t in enumerate(text, 1) for e in p.feed(LogLine("t", i, t))]
    assert p.vllm_lines == len(text)
    assert [e.kind for e in evs if isinstance(e, EngineError)] == ["oom"]


def test_requested_shutdown_stays_quiet_and_kill_is_a_crash() -> None:
    """EngineDeadError after a requested stop is noise; after the engine core exited unasked, a crash."""
    dead = (
        "(APIServer pid=1) ERROR 11-29 19:02:17 [async_llm.py:906] vllm.v1.engine.exceptions.EngineDeadError: "
        "EngineCore encountered an issue. See stack trace (above) for the root cause."
    )
    asked = (
        "(APIServer pid=1) INFO 11-29 19:02:17 [launcher.py:254] [shutdown] API server: shutdown triggered\n"
    )
    assert [e.kind for e in _errors(asked + dead)] == ["shutdown_noise"]
    killed = (
        "(APIServer pid=1) INFO 11-29 18:43:29 [utils.py:628] [shutdown] Process manager: send sigterm to "
        "process EngineCore\n"
        "(APIServer pid=1) WARNING 11-29 18:43:29 [core_client.py:817] [shutdown] MPClient: engine core exited "
        "unexpectedly; starting cleanup\n"
    )
    kinds = [e.kind for e in _errors(killed + dead)]
    assert kinds == ["engine_crashed"], kinds  # the EngineDeadError is the same crash, counted once


def test_a_wrapped_args_line_is_rejoined_and_a_cut_one_is_damaged() -> None:
    """A terminal-wrapped `non-default args` dict is read whole; one cut short keeps the flags before
    the cut, says the rest is unknown (a flags_damaged fact) and counts a damaged record."""
    from observe.model import LogLine, StartupFact
    from observe.parse import Parser

    head = "(APIServer pid=1) INFO 05-06 22:27:57 [utils.py:233] non-default args: {'model': 'm', 'max_num_s"
    wrapped = [
        head,
        "eqs': 64, 'gpu_memory_utiliz",
        "ation': 0.8}",
        "(APIServer pid=1) INFO 05-06 22:27:58 [x.py:1] hi",
    ]
    cut = [head[: head.index("'max_num_s")] + "'max_num_seqs': 64, 'gpu_mem", wrapped[-1]]
    for lines, flags, damaged in (
        (wrapped, {"--model": "m", "--max-num-seqs": 64, "--gpu-memory-utilization": 0.8}, 0),
        (cut, {"--model": "m", "--max-num-seqs": 64}, 1),
    ):
        p = Parser(year=2025)
        evs = [e for i, t in enumerate(lines, 1) for e in p.feed(LogLine("t", i, t))] + p.flush()
        facts = {e.name: e.value for e in evs if isinstance(e, StartupFact)}
        assert facts["flags"] == flags
        assert ("flags_damaged" in facts) is bool(damaged) and p.damaged_lines == damaged


def test_a_stats_record_cut_short_is_counted_damaged() -> None:
    from observe.model import LogLine
    from observe.parse import Parser

    p = Parser(year=2025)
    line = (
        "(APIServer pid=1) INFO 10-02 08:00:01 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 "
        "tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 3 r"
    )
    p.feed(LogLine("t", 1, line))
    p.feed(LogLine("t", 2, "(APIServer pid=1) INFO 10-02 08:00:02 [x.py:1] next record"))
    p.flush()
    assert p.damaged_lines == 1


def test_the_worst_rank_decides_and_is_named(tmp_path: Path) -> None:
    """Each TP worker prints its own available KV memory; one rank's negative figure is the cause."""
    from observe import pipeline, report

    log = tmp_path / "tp2.log"
    log.write_text(
        "(Worker_TP0 pid=101) INFO 07-08 15:38:03 [gpu_worker.py:508] Available KV cache memory: 11.05 GiB\n"
        "(Worker_TP1 pid=102) INFO 07-08 15:38:03 [gpu_worker.py:508] Available KV cache memory: -0.52 GiB\n"
        "(EngineCore_DP0 pid=100) ERROR 07-08 15:38:04 [core.py:700] ValueError: No available memory for the "
        "cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n"
    )
    d = report.to_dict(pipeline.diagnose_paths([log]))
    assert d["engine"]["available_kv_gib"] == -0.52
    f = next(f for f in d["findings"] if f["id"] == "no_kv_cache_memory")
    assert f["data"]["worst_worker"] == "Worker_TP1 pid=102" and "Worker_TP1" in f["evidence"]


@pytest.mark.parametrize(
    "first,second",
    [
        ("Avg generation throughput: 31", "0.2 tokens/s, Running: 3 reqs"),  # inside a number
        ("Avg generation throu", "ghput: 310.2 tokens/s, Running: 3 reqs"),  # inside a word
    ],
)
def test_a_stats_line_wrapped_inside_its_head_keeps_its_throughput(first: str, second: str) -> None:
    head = "(APIServer pid=1) INFO 10-02 08:00:01 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s, "
    tail = ", Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%"
    from observe.model import StatsSample

    got = [
        e for e in parse_text(head + first + "\n" + second + tail, year=2025) if isinstance(e, StatsSample)
    ]
    assert [(e.prompt_tps, e.generation_tps, e.running) for e in got] == [(1.0, 310.2, 3)]


def test_a_relaunch_forgets_the_workers_of_the_last_launch(tmp_path: Path) -> None:
    """Two workers' KV figures, then a new launch whose engine fails: no worst worker of the old one."""
    from observe import pipeline, report

    log = tmp_path / "relaunch.log"
    log.write_text(
        "(Worker_TP0 pid=101) INFO 07-08 15:38:03 [gpu_worker.py:508] Available KV cache memory: 11.05 GiB\n"
        "(Worker_TP1 pid=102) INFO 07-08 15:38:03 [gpu_worker.py:508] Available KV cache memory: 10.00 GiB\n"
        "(APIServer pid=1) INFO 07-08 15:40:00 [utils.py:233] non-default args: {'model': 'm'}\n"
        "(EngineCore_DP0 pid=100) ERROR 07-08 15:40:04 [core.py:700] ValueError: No available memory for the "
        "cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n"
    )
    d = report.to_dict(pipeline.diagnose_paths([log]))
    f = next(f for f in d["findings"] if f["id"] == "no_kv_cache_memory")
    assert "worst_worker" not in f["data"]


def test_every_real_log_at_once_diagnoses(tmp_path: Path) -> None:
    """All of tests/data's logs concatenated (restarts, crashes, forms) read without an error."""
    from observe import pipeline, report

    data = Path(__file__).parent / "data"
    big = tmp_path / "all.log"
    big.write_bytes(b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in sorted(data.rglob("*.log"))))
    d = report.to_dict(pipeline.diagnose_paths([big]))
    # two of the files' API servers share pids (7 and 22188 alternate): read as servers side by side
    assert d["findings"] and sum(i["stats"]["samples"] for i in d["instances"]) > 0


def test_two_api_servers_in_one_paste_are_said(tmp_path: Path) -> None:
    """Two API servers (different pids) in one file are read as one instance, and the report says so."""
    from observe import pipeline, report

    log = tmp_path / "two.log"
    line = (
        "(APIServer pid={pid}) INFO 10-02 08:00:0{s} [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 "
        "tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache "
        "usage: 5.0%, Prefix cache hit rate: 0.0%\n"
    )
    log.write_text(line.format(pid=100, s=1) + line.format(pid=200, s=2))
    d = report.to_dict(pipeline.diagnose_paths([log]))
    notes = [u for u in d["unreadable"] if u["kind"] == "several_servers"]
    assert len(notes) == 1 and "100, 200" in notes[0]["reason"]
