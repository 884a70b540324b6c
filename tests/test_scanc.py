"""The two builds of the scan's line classifier give the same runs, and what they credit is right.

* ``observe.parse._scanc`` (C, built by ``pip install``) against the pure-Python ``Classifier._runs``:
  the same runs on every real log in the tree, on windows and cuts of them, with and without a line
  length cap, and on generated blocks (hypothesis) of real lines, mutated digits, colour codes,
  carriage returns, non-ASCII bytes and empty lines;
* a line judged ``INERT`` is one the parser only counts: fed, it yields no event and leaves the
  parser exactly as ``credit_lines(1)`` does, on every such line of the real logs, with and without
  an earlier stamp, process and error in the parser's state;
* the canonical-stats pattern reads exactly what the general path reads (numbers drawn by hypothesis).

Where ``OBSERVE_REQUIRE_COMPILED=1`` (tools/test.sh sets it when a C compiler is present), the
compiled classifier must have been built.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from observe.model import LogLine
from observe.parse import canon, scan, triggers
from observe.parse import parser as parser_mod
from tests.scaninputs import real_inputs

compiled_only = pytest.mark.skipif(scan._scanc is None, reason="observe.parse._scanc is not built")


def _files() -> list[Path]:
    out: list[Path] = []
    for p in real_inputs():
        out.extend(
            sorted(x for x in p.rglob("*") if x.is_file() and x.suffix == ".log") if p.is_dir() else [p]
        )
    return out


FILES = _files()
POOL = sorted({ln for p in FILES[:40] for ln in p.read_bytes().split(b"\n")[:400]})


def _whole(data: bytes) -> bytes:
    return data[: data.rfind(b"\n") + 1]


def test_compiled_classifier_is_built_where_required() -> None:
    if os.environ.get("OBSERVE_REQUIRE_COMPILED") == "1":
        assert scan._scanc is not None, "observe.parse._scanc was not built by pip install"
        assert scan.Classifier().compiled
    else:
        pytest.skip("OBSERVE_REQUIRE_COMPILED is not set")


def test_python_classifier_can_be_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "COMPILED", False)
    assert not scan.Classifier().compiled


@compiled_only
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_same_runs_on_real_logs(path: Path) -> None:
    data = _whole(path.read_bytes())
    for max_len in (None, 80):
        c, py = scan.Classifier(max_len, compiled=True), scan.Classifier(max_len, compiled=False)
        assert c.runs(data) == py.runs(data)
        # a window inside the file, at line boundaries: offsets stay the file's
        lo = data.find(b"\n", len(data) // 3) + 1
        hi = data.find(b"\n", 2 * len(data) // 3) + 1
        if 0 < lo < hi:
            assert c.runs(data, lo, hi) == py.runs(data, lo, hi)
            assert c.runs(bytearray(data), lo, hi) == py.runs(data, lo, hi)


def _covers(data: bytes, runs: list[scan.Run]) -> None:
    """The runs tile data exactly: line counts and byte ranges add up."""
    pos = lines = 0
    for kind, start, end, n in runs:
        assert start == pos
        if kind not in scan.COUNTED:
            assert n == 1 and data[end : end + 1] == b"\n" and b"\n" not in data[start:end]
            pos = end + 1
        else:
            assert data[start:end].count(b"\n") == n and data[end - 1 : end] == b"\n"
            pos = end
        lines += n
    assert pos == len(data) and lines == data.count(b"\n")


_pieces = st.one_of(
    st.sampled_from(POOL),
    st.sampled_from(POOL).map(lambda b: b.replace(b"0", b"7").replace(b"2", b"9")),
    st.sampled_from(POOL).map(lambda b: b"\x1b[32m" + b + b"\x1b[0m"),
    st.sampled_from(POOL).map(lambda b: b + b"\r"),
    st.sampled_from(POOL).map(lambda b: b[: len(b) // 2]),
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
    st.just(b""),
    st.just("caf\u00e9 \u2190[0m".encode()),
)


@compiled_only
@settings(max_examples=300, deadline=None)
@given(st.lists(_pieces, max_size=60), st.one_of(st.none(), st.integers(0, 200)))
def test_same_runs_on_generated_blocks(lines: list[bytes], max_len: int | None) -> None:
    data = b"".join(ln + b"\n" for ln in lines)
    c, py = scan.Classifier(max_len, compiled=True), scan.Classifier(max_len, compiled=False)
    runs = c.runs(data)
    assert runs == py.runs(data)
    _covers(data, runs)
    # a second pass hits the table the first one filled: same answer
    assert c.runs(data) == runs


@compiled_only
def test_compiled_rejects_bad_blocks_and_judges() -> None:
    c = scan.Classifier(compiled=True)
    with pytest.raises(ValueError, match="newline"):
        c.runs(b"no newline at the end")
    with pytest.raises(ValueError, match="within"):
        c.runs(b"a\n", 0, 5)
    table = scan._scanc.Table(lambda shape: 32)
    with pytest.raises(ValueError, match="judge"):
        table.runs(b"x\n")
    with pytest.raises(TypeError):
        scan._scanc.Table(42)


def test_table_is_bounded_and_stays_right() -> None:
    """More shapes than the table keeps: it starts over, the answers stay the same."""
    data = b"".join(
        b"traceback context line " + bytes([65 + i % 26]) * (1 + i // 26) + b"\n" for i in range(5000)
    )
    for compiled in (False, True) if scan._scanc is not None else (False,):
        runs = scan.Classifier(compiled=compiled).runs(data)
        assert runs == [(scan.INERT, 0, len(data), 5000)]


# ---------------------------------------------------------------------------------------- INERT
def _state(p: object, depth: int = 2) -> dict:
    """p's attributes, and those of the objects it holds (the parser's failure reporter's too)."""
    return {
        k: _state(v, depth - 1) if depth and hasattr(v, "__dict__") else repr(v) for k, v in vars(p).items()
    }


def _inert_lines() -> list[bytes]:
    seen: dict[bytes, bytes] = {}
    for p in FILES:
        for ln in p.read_bytes().split(b"\n"):
            shape = ln.translate(scan._FOLD)
            if shape not in seen and scan.judge(shape) == scan.INERT:
                seen[shape] = ln
    return list(seen.values())


INERT_LINES = _inert_lines()
PREAMBLE = [
    "(EngineCore_DP0 pid=7) INFO 11-29 17:42:11 [core.py:93] Initializing a V1 LLM engine (v0.32.0)",
    "(EngineCore_DP0 pid=7) ERROR 11-29 17:42:12 [core.py:710] EngineCore failed to start.",
    "Traceback (most recent call last):",
]


def test_inert_lines_exist_in_the_real_logs() -> None:
    assert len(INERT_LINES) > 100  # traceback frames, warning context, blank lines, banners


@pytest.mark.parametrize("preamble", [0, len(PREAMBLE)])
def test_an_inert_line_is_only_counted(preamble: int) -> None:
    for raw in INERT_LINES:
        fed, credited = parser_mod.Parser(year=2026), parser_mod.Parser(year=2026)
        for i, t in enumerate(PREAMBLE[:preamble], 1):
            fed.feed(LogLine("x", i, t))
            credited.feed(LogLine("x", i, t))
        assert fed.feed(LogLine("x", preamble + 1, raw.decode("ascii"))) == [], raw
        credited.credit_lines(1)
        assert _state(fed) == _state(credited), raw


def test_inert_lines_are_credited_in_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A traceback-heavy real log: its inert lines are not fed."""
    fed = []
    real = scan.Scanner.feed_line
    monkeypatch.setattr(
        scan.Scanner,
        "feed_line",
        lambda self, raw, *groups: fed.append(bytes(raw)) or real(self, raw, *groups),
    )
    credited = []
    monkeypatch.setattr(parser_mod.Parser, "credit_lines", lambda self, n: credited.append(n))
    path = max(FILES, key=lambda p: sum(ln in INERT_LINES for ln in p.read_bytes().split(b"\n")))
    sc = scan.Scanner("x", parser_mod.Parser(year=2026), lambda ev: None, lambda n: None)
    sc.read(path)
    assert sum(credited) > 0
    assert not any(scan.judge(ln.translate(scan._FOLD)) == scan.INERT for ln in fed if b"\r" not in ln)


# ------------------------------------------------------------------------------- literal groups
def _scan_events(path: Path, masks: bool) -> tuple[list[str], tuple, int]:
    p = parser_mod.Parser(year=2026)
    events: list = []
    told = []
    real = parser_mod.Parser.feed

    def feed(self, line, groups=triggers.ALL):
        told.append(groups)
        return real(self, line, groups if masks else triggers.ALL)

    parser_mod.Parser.feed = feed  # type: ignore[method-assign]
    try:
        sc = scan.Scanner(str(path), p, events.append, lambda n: None)
        sc.read(path)
        events.extend(p.flush())
    finally:
        parser_mod.Parser.feed = real  # type: ignore[method-assign]
    state = (p.lines, p.vllm_lines, p.events, p.parse_errors, sorted(p.processes), sorted(p.formats))
    return [repr(e) for e in events], state, sum(g != triggers.ALL for g in told)


def test_lines_fed_with_their_literal_groups_yield_what_they_yield_fed_whole() -> None:
    """Every real log: a line fed with only the groups of rule literals it holds gives the events and
    counts it gives with every group's rules tried (the scan's kinds FED + g)."""
    masked = 0
    for path in FILES:
        with_masks = _scan_events(path, True)
        assert with_masks[:2] == _scan_events(path, False)[:2], path.name
        masked += with_masks[2]
    assert masked > 1000  # most prefixed lines hold no failure literal


def test_literal_groups_of_a_line() -> None:
    fold = scan._FOLD
    assert (
        scan.judge(b"(EngineCore pid=7) INFO 05-12 10:11:12 [core.py:58] hello".translate(fold)) == scan.FED
    )
    shape = (
        b"(EngineCore pid=7) INFO 05-12 10:11:12 [core.py:58] Loading weights took 3.21 seconds".translate(
            fold
        )
    )
    assert scan.judge(shape) == scan.FED + triggers.STARTUP
    shape = b"(APIServer pid=7) ERROR 05-12 10:11:12 [x.py:1] EngineDeadError: boom".translate(fold)
    assert scan.judge(shape) == scan.FED + triggers.FAILURE
    for line in (
        b'{"log": "INFO 05-12 10:11:12 [x.py:1] hello"}',  # JSON may spell a literal with escapes
        b"(APIServer pid=7) INFO 05-12 10:11:12 [x.py:1] Run\x1b[0mning: 3 reqs",  # a colour code inside
        b"\x1b[32mINFO\x1b[0m 05-12 10:11:12 [x.py:1] hello",
        b"INFO 05-12 10:11:12 [x.py:1] caf\xc3\xa9",
    ):
        assert scan.judge(line.translate(fold)) == scan.FEED, line


@pytest.mark.parametrize(
    "line",
    [
        b"(APIServer pid=7) INFO 05-12 10:11:12 [config.py:1] Using max[32m model len 4096",
        b"Using max[32m model len 4096",  # no prefix: would be an inert line but for the remnant
        b"Using max[91m model len 4096",
        b"(APIServer pid=7) INFO 05-12 10:11:12 [config.py:1] Using max model len[0m 4096",
    ],
)
def test_a_colour_remnant_inside_a_literal_is_fed_whole(line: bytes) -> None:
    """A bare colour code ("[32m", its ESC lost in a paste) that the parser strips can join a rule
    literal ("Using max[32m model len" -> "Using max model len"): such a line is neither credited
    as inert nor fed with fewer rule groups, whatever its digits."""
    assert scan.judge(line.translate(scan._FOLD)) == scan.FEED
    for compiled in (False, True) if scan._scanc is not None else (False,):
        p, events = parser_mod.Parser(year=2026), []
        sc = scan.Scanner("x", p, events.append, lambda n: None)
        sc._classifier = scan.Classifier(compiled=compiled)
        sc.block(line + b"\n")
        direct = parser_mod.Parser(year=2026).feed(LogLine("x", 1, line.decode()))
        assert [repr(e) for e in events] == [repr(e) for e in direct]
        assert any(getattr(e, "name", None) == "max_model_len" for e in events)


# ------------------------------------------------------------------------------ canonical stats
_num = st.one_of(
    st.integers(0, 10**15 - 1).map(str),
    st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)).map(lambda t: f"{t[0]}.{t[1]}"),
    st.floats(0, 1e7, allow_nan=False).map(lambda f: f"{f:.1f}"),
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["APIServer", "EngineCore_DP0", "Worker_TP1", "VllmWorker"]),
    st.integers(0, 99999),
    st.sampled_from(["loggers.py", "v1/metrics/loggers.py", "metrics.py"]),
    st.integers(0, 999),
    _num,
    _num,
    st.integers(0, 999).map(str),
    st.integers(0, 999).map(lambda n: f"{n:03d}"),
    st.sampled_from(["GPU", "CPU", "XPU", "TPU"]),
    _num,
    _num,
    st.sampled_from(["", ".", " ", ", MM cache hit rate: 3.0%"]),
)
def test_canonical_stats_read_as_the_general_path_reads(
    proc, pid, lf, eng, p, g, running, waiting, dev, kv, hit, tail
) -> None:
    line = (
        f"({proc} pid={pid}) INFO 12-31 23:59:59 [{lf}:335] Engine {eng:03d}: Avg prompt throughput: {p} "
        f"tokens/s, Avg generation throughput: {g} tokens/s, Running: {running} reqs, Waiting: {waiting} "
        f"reqs, {dev} KV cache usage: {kv}%, Prefix cache hit rate: {hit}%{tail}"
    )
    out = []
    for fast in (False, True):
        parser_mod.FAST_STATS = fast
        try:
            p_ = parser_mod.Parser(year=2026)
            events = p_.feed(LogLine("x", 1, line)) + p_.feed(LogLine("x", 2, "next")) + p_.flush()
            out.append((events, _state(p_)))
        finally:
            parser_mod.FAST_STATS = True
    assert out[0] == out[1]


def test_the_canonical_pattern_is_used() -> None:
    line = (
        "(APIServer pid=22305) INFO 11-29 17:42:11 [loggers.py:335] Engine 000: Avg prompt throughput: "
        "335.2 tokens/s, Avg generation throughput: 17.7 tokens/s, Running: 32 reqs, Waiting: 0 reqs, "
        "CPU KV cache usage: 0.4%, Prefix cache hit rate: 0.0%"
    )
    assert canon.CANON_V1.fullmatch(line) is not None
    (ev,) = [
        e
        for e in parser_mod.Parser(year=2026).feed(LogLine("x", 1, line))
        if type(e).__name__ == "StatsSample"
    ]
    assert dataclasses.asdict(ev)["running"] == 32 and ev.kv_device == "CPU" and ev.kv_usage_pct == 0.4


def test_judge_answers_digit_blind_shapes_from_its_cache_as_it_would_afresh() -> None:
    """judge keeps one answer for shapes that differ only in their digits' classes (a restart's
    new stamps and pids): on real lines, each with every digit in either class, in an order that
    fills that cache with the other class first, its answer is the one judged afresh; an access
    line still counts by its own status class."""
    fold = scan._FOLD
    shapes = [ln.translate(fold) for ln in POOL if any(c in ln for c in b"0123456789")]
    assert len(shapes) > 500
    fives = [s.translate(bytes.maketrans(b"0", b"5")) for s in shapes]
    scan._blind.clear()
    for shape in fives + shapes:
        afresh = scan._counted(shape)
        assert scan.judge(shape) == (scan._not_counted(shape) if afresh is None else afresh), shape
    assert len(scan._blind) < len(fives + shapes)  # the cache answered some
    ok = b'INFO:     10.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK'.translate(fold)
    bad = b'INFO:     10.0.0.1:5000 - "GET /health HTTP/1.1" 500 OK'.translate(fold)
    assert (scan.judge(ok), scan.judge(bad), scan.judge(ok)) == (scan.COUNT, scan.FED, scan.COUNT)
