"""The misses of issue 32's twelfth blind set (tests/data/eval32l/RESULTS.md), each on its real excerpt. Sources
in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.model import LogLine
from observe.parse import cloudwatch, parse_text, pasted
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data"


def test_error_in_preprocessing_prompt_inputs_is_one_requests_answer_not_an_engine_error() -> None:
    """AI (010: V1 ~0.8.3 serving_completion.py:116, cut in tokenization; 014: V0 ~0.7.x serving_chat.py:193,
    flattened onto one line after two stats lines): vLLM logs the request's preprocessing error with
    logger.exception and answers it with create_error_response; the engine serves on. A request_error event,
    no critical finding, no engine_error."""
    for name in ("010", "014"):
        d = _diagnose(DATA / "eval32l" / f"{name}.log")
        assert d["events"]["error_kinds"].get("request_error") == 1, (name, d["events"]["error_kinds"])
        assert not any(f["severity"] == "critical" for f in d["findings"]), (name, d["findings"])
        assert not {"engine_error", "engine_crashed", "engine_startup_failed"} & {
            f["id"] for f in d["findings"]
        }


def test_a_request_error_explains_only_its_own_records_traceback(tmp_path: Path) -> None:
    """The request's traceback is its own record's (the same logger call site): another record's error after it
    (eval32l/025's EngineCore ERROR records cut in GroupCoordinator's construction) is still the failure."""
    both = tmp_path / "both.log"
    both.write_text((DATA / "eval32l" / "010.log").read_text() + (DATA / "eval32l" / "025.log").read_text())
    alone = {
        f["id"] for f in _diagnose(DATA / "eval32l" / "025.log")["findings"] if f["severity"] == "critical"
    }
    d = _diagnose(both)
    assert alone and alone <= {f["id"] for f in d["findings"] if f["severity"] == "critical"}, d["findings"]
    assert any(e.kind == "request_error" for e in parse_text(both.read_text()) if hasattr(e, "kind"))


def test_colour_codes_written_out_as_caret_text_are_peeled() -> None:
    """AJ (018: vllm-omni on Ascend, every line '^[[1;36m(EngineCore_DP0 pid=6444)^[[0;0m …', ESC copied as the two
    characters '^['): the colour codes are peeled like the other renderings, the lines are EngineCore_DP0's, the
    log is no longer refused as 'no vLLM log lines'."""
    text = (DATA / "eval32l" / "018.log").read_text()
    assert text.startswith("^[[1;36m(EngineCore_DP0 pid=6444)^[[0;0m")
    events = parse_text(text)
    assert events and all(getattr(e.env, "process", None) == "EngineCore_DP0" for e in events), events
    _diagnose(DATA / "eval32l" / "018.log")  # raises InputError when refused


def test_a_traceback_cut_in_the_input_batchs_construction_is_a_failed_start() -> None:
    """AJ (018, its frames once peeled: vllm_ascend's model_runner_v1.py __init__ → npu_input_batch.py __init__ →
    block_table.py, cut both ends): V1's input batch is built only while the worker is set up (the model runner's
    constructor, initialize_kv_cache), so the engine failed in its start-up: critical, phase startup."""
    d = _diagnose(DATA / "eval32l" / "018.log")
    found = {f["id"]: f for f in d["findings"]}
    assert found["engine_error"]["severity"] == "critical", d["findings"]
    assert found["engine_error"]["data"]["phase"] == "startup"
    assert "engine_crashed" not in found


def test_kserves_container_name_before_the_process_prefix_is_peeled() -> None:
    """AK (020: KServe's Hugging Face runtime, 'kserve-container (EngineCore_0 pid=58) RuntimeError: Error building
    extension 'sampling':' after torch's _run_ninja_build frames, nvcc not found): the container name is peeled, the
    line is EngineCore_0's, and its exception is the engine core's failure (critical), not an OOM."""
    lines = (DATA / "eval32l" / "020.log").read_text().splitlines()
    line = next(x for x in lines if x.startswith("kserve-container (EngineCore_0 pid=58) RuntimeError"))
    events = parse_text(line + "\n")
    assert events and all(getattr(e.env, "process", None) == "EngineCore_0" for e in events), events
    d = _diagnose(DATA / "eval32l" / "020.log")
    found = {f["id"]: f for f in d["findings"]}
    assert found["engine_error"]["severity"] == "critical" and "cuda_oom" not in found, d["findings"]


def test_a_cloudwatch_csv_export_is_read_as_the_lines_vllm_wrote() -> None:
    """AM (024: SageMaker's CloudWatch export, '1756144012376,"#033[1;36m(EngineCore_0 pid=75)#033[0;0m ERROR …
    [core.py:700]   File ""/usr/local/…/core.py"", line 492, in __init__#015"', quoted or bare): each row is
    unwrapped (the time a UTC stamp in front, the doubled quotes and #033 / #015 escapes undone), the lines are
    EngineCore_0's ERROR records, and the cut traceback is the engine's failure (critical)."""
    rows = (DATA / "eval32l" / "024.log").read_text().splitlines()
    quoted = next(r for r in rows if '""' in r)
    msg = cloudwatch.message(quoted)
    assert msg is not None and msg.startswith("2025-08-25T17:46:52.376Z \x1b[1;36m(EngineCore_0 pid=75)")
    assert 'File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 492' in msg
    assert not msg.endswith(("#015", "\r")) and cloudwatch.message(rows[1]) is not None  # a bare field too
    assert cloudwatch.message("INFO 08-25 10:46:52 [core.py:700] x") is None
    d = _diagnose(DATA / "eval32l" / "024.log")
    found = {f["id"]: f for f in d["findings"]}
    # a failed start since eval32am's ZC (run_engine_core's EngineCoreProc(...) call is the core's start-up)
    failure = found.get("engine_startup_failed") or found.get("engine_error")
    assert failure is not None and failure["severity"] == "critical", d["findings"]
    assert "engine_crashed" not in found


def test_an_indented_hard_wrapped_traceback_is_rejoined() -> None:
    """AH (007: V0 ~0.6.2's '    Process SpawnProcess-1:' and its traceback, every line indented four spaces, the
    frame lines wrapped at 84 columns inside their paths, '…/vllm/engine/multi' / '    processing/engine.py", line
    388, in run_mp_engine', cut under LLMEngine.__init__): the indentation is taken off and each wrapped frame
    glued back, so the MQLLMEngine's construction is read: the engine failed to start."""
    rows = (DATA / "eval32l" / "007.log").read_text().splitlines()
    lines = list(pasted.rejoin(LogLine("007", i, t) for i, t in enumerate(rows, 1)))
    assert lines[0].text == "Process SpawnProcess-1:" and len(lines) < len(rows)
    assert any(
        x.text.endswith('vllm/engine/multiprocessing/engine.py", line 388, in run_mp_engine') for x in lines
    )
    plain = list(
        pasted.rejoin(
            [LogLine("x", 1, '  File "/a/vllm/engine/multi'), LogLine("x", 2, 'b.py", line 1, in f')]
        )
    )
    assert [x.text for x in plain] == [
        '  File "/a/vllm/engine/multi',
        'b.py", line 1, in f',
    ]  # not indented: as is
    d = _diagnose(DATA / "eval32l" / "007.log")
    found = {f["id"]: f for f in d["findings"]}
    assert found["engine_startup_failed"]["severity"] == "critical", d["findings"]
    assert "engine_crashed" not in found


def test_a_traceback_cut_under_asyncllms_construction_is_a_failed_start() -> None:
    """AL (022: verl's 'ray.exceptions.RayTaskError(RuntimeError): ray::vLLMHttpServer.launch_server()', its frames
    asyncio's, concurrent.futures' and verl's vllm_async_server.py, cut under run_server's source line 'engine_client =
    AsyncLLM.from_vllm_config(…)'): V1's AsyncLLM built by its classmethod launches the engine cores and waits for
    them, so the traceback is cut inside vLLM's start-up: the engine failed to start, the log is not refused."""
    d = _diagnose(DATA / "eval32l" / "022.log")
    found = {f["id"]: f for f in d["findings"]}
    assert found["engine_startup_failed"]["severity"] == "critical", d["findings"]
    assert "AsyncLLM.from_vllm_config" in found["engine_startup_failed"]["evidence"]
    assert "engine_crashed" not in found
