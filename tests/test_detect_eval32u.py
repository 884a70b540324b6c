"""The misses of issue 32's blind set eval32u (tests/data/eval32u/RESULTS.md), each on its real excerpt. Sources in
tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse import native
from observe.parse.failtypes import RunState
from tests.diagnosekit import critical, suggestions
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data"


def test_a_workers_segfault_under_ray_is_the_engines_death() -> None:
    """Not a miss at the measurement (main's prefixed fatal-signal reader, eval32s FA, reads it); kept with HB's fix
    (023: vLLM ~0.5.3 under Ray, '(RayWorkerWrapper pid=24036)' before abseil's '*** SIGSEGV received at
    time=…' frames, then faulthandler's 'Fatal Python error: Segmentation fault' and its stack in vLLM's
    pynccl_wrapper ncclAllReduce): the worker process died of a signal, no exception line follows — the engine
    crashed (critical), its phase unknown (no stats before it)."""
    d = _diagnose(DATA / "eval32u" / "023.log")
    crit = critical(d)
    assert [f["id"] for f in crit] == ["engine_crashed"], d["findings"]
    assert crit[0]["data"].get("phase") == "unknown"


def test_a_bare_faulthandler_dump_through_vllms_attention_backend_is_read() -> None:
    """HB (026: V0 ~0.5.1, bare 'Fatal Python error: Segmentation fault' and faulthandler's 'Current thread …' stack
    'File "…/flashinfer/decode.py", line 514 in begin_forward' ← vLLM's attention/backends/flashinfer.py): the log was
    refused as holding no vLLM line — faulthandler prints a frame as 'line N in f', without Python's comma — and
    the crash was not read. Now the vLLM frame makes the log vLLM's, and the segfault is the engine's death."""
    d = _diagnose(DATA / "eval32u" / "026.log")
    assert [f["id"] for f in critical(d)] == ["engine_crashed"], d["findings"]


def test_a_segfault_in_cuda_graph_capture_is_a_failed_start() -> None:
    """Read at the measurement too (main's fatal-signal reader); kept with HB's fix (022: V0 ~0.3, abseil's SIGSEGV lines, 'Fatal Python error: Segmentation fault' and the stack, most recent
    call first, capture_begin ← vLLM's model_runner capture ← capture_model): the crash is held until its frames
    tell where it was — CUDA-graph capture, a start-up step — so it is a failed start, not a crash while serving."""
    d = _diagnose(DATA / "eval32u" / "022.log")
    ids = {f["id"] for f in critical(d)}
    assert "engine_startup_failed" in ids and "engine_crashed" not in ids, d["findings"]
    assert d["launches"][-1]["status"] == "failed"


def test_a_native_crash_alone_is_read_as_its_hosts() -> None:
    """HB's limit (025: PyTorch's '!!!!!!! Segfault encountered !!!!!!!' dump in swap_blocks_batch, no vLLM record
    or frame): any program's process can crash so, so the log is read as its host's crash, said so, where it was
    unknown (tests/test_detect_hostonly.py); the reader itself reads the three handlers' words (and none after a
    requested stop)."""
    d = _diagnose(DATA / "eval32u" / "025.log")
    assert [u["kind"] for u in d["unreadable"]] == ["host_only"]
    assert [(f["id"], f["data"]["phase"]) for f in critical(d)] == [("engine_crashed", "unknown")]
    run = RunState(False, False)
    for text, sig in (
        ("Fatal Python error: Segmentation fault", "SIGSEGV"),
        ("Fatal Python error: Aborted", "SIGABRT"),
        ("*** SIGBUS received at time=1709021359 on cpu 44 ***", "SIGBUS"),
        ("!!!!!!! Segfault encountered !!!!!!!", "SIGSEGV"),
    ):
        f = native.crash(text, run)
        assert f is not None and f.details["signal"] == sig and f.details["form"] == native.FORM
    assert native.crash("Fatal Python error: Segmentation fault", RunState(True, False, True)) is None
    assert native.crash("a Segmentation fault in passing", run) is None
    # faulthandler's lines around the stacks are the report's pieces, not a bare traceback's end (026's full parse)
    assert native.piece("Current thread 0x00007fcf597eb640 (most recent call first):")
    assert native.piece("Thread 0x00007f1 (most recent call first):") and native.piece(
        "Extension modules: numpy"
    )
    assert not native.piece("RuntimeError: CUDA error: an illegal memory access was encountered")


def test_a_prefix_cache_rate_over_a_handful_of_short_prompts_is_not_judged(tmp_path: Path) -> None:
    """HE (028: V1 ~0.10.2, three chat requests' 200s and six 10-second stats lines, prompt throughput 0.0 to 1.6
    tokens/s, 'Prefix cache hit rate: 0.0%'): V1 prints the hit rate over its recent prompts, so with a few prompts
    of a dozen tokens (less than one KV block: nothing can hit) the 0 % is no evidence. No low_prefix_cache_hit_rate
    below low_prefix_min_prompt_tps of prompt throughput; the same lines under real prefill load still report it."""
    d = _diagnose(DATA / "eval32u" / "028.log")
    assert "low_prefix_cache_hit_rate" not in {f["id"] for f in d["findings"]}, d["findings"]
    lines = (DATA / "eval32u" / "028.log").read_text().splitlines()
    busy = [
        ln.replace("Avg prompt throughput: 0.0", "Avg prompt throughput: 850.0")
        for ln in lines
        if "loggers" in ln
    ]
    busy = [ln.replace("Avg prompt throughput: 1.", "Avg prompt throughput: 91") for ln in busy]
    path = tmp_path / "busy.log"
    path.write_text("\n".join(busy) + "\n")
    found = {f["id"] for f in _diagnose(path)["findings"]}
    assert "low_prefix_cache_hit_rate" in found, found


def test_a_start_that_failed_in_cuda_graph_capture_gets_enforce_eager() -> None:
    """HD (022: the segfault's stack in torch.cuda.graphs capture_begin ← vLLM's model_runner capture ←
    capture_model): the start failed inside CUDA-graph capture for a cause no flag sizes (not an OOM), and eager
    mode skips that step: --enforce-eager, instead of the note that no launch flag is known to fix it."""
    d = _diagnose(DATA / "eval32u" / "022.log")
    assert suggestions(d).get("--enforce-eager") == [True], d["recommendations"]
    rec = d["recommendations"][0]
    assert rec["finding_ids"] == ["engine_startup_failed"] and "capture_model" in rec["reason"]
    assert not any("no launch flag is known" in n["text"] for n in d["advice_notes"])


def test_a_start_that_failed_elsewhere_gets_no_enforce_eager() -> None:
    """HD's limit: a failed start in another step (024: load_model's frames) gets no --enforce-eager."""
    d = _diagnose(DATA / "eval32u" / "024.log")
    assert "--enforce-eager" not in suggestions(d), d["recommendations"]


def test_an_asgi_record_through_starlettes_disconnect_listener_is_not_a_failure(tmp_path: Path) -> None:
    """HF (008: V0 0.5.3.post1, the chat request's 200, uvicorn's 'Exception in ASGI application' and a traceback
    through StreamingResponse.__call__'s 'await wrap(partial(self.listen_for_disconnect, receive))' → 'await func()',
    cut): the traceback is the disconnect listener's (cancelled, or told the client left) — one streamed request, the
    engine goes on; the listener is named only on the source line. No finding. The same lines without that source
    line are a request that failed in the server: an engine_error, a warning (no "Aborted request" just above it:
    the handler raised before the engine had the request; eval32t GB's has one and is critical)."""
    log = DATA / "eval32u" / "008.log"
    d = _diagnose(log)
    assert critical(d) == [] and d["findings"] == [], d["findings"]
    text = log.read_text(encoding="utf-8")
    cut = tmp_path / "008-no-listener.log"
    cut.write_text(
        "".join(ln for ln in text.splitlines(True) if "listen_for_disconnect" not in ln), encoding="utf-8"
    )
    assert [(f["id"], f["severity"]) for f in _diagnose(cut)["findings"]] == [("engine_error", "warning")]
