"""Properties of observe.parse on arbitrary input (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from observe.model import LogLine, StatsSample
from observe.parse import Parser, parse_dict_repr, parse_kv_repr, startup
from observe.parse.envelope import Ctx

# a real V1 line from corpus 003 (vllm-project/vllm issue, v0.20+), and a real V0 line from corpus 005
V1 = (
    "(APIServer pid=3646) INFO 05-19 10:13:41 [loggers.py:271] Engine 000: Avg prompt throughput: 18032.5 tokens/s, "
    "Avg generation throughput: 589.8 tokens/s, Running: 21 reqs, Waiting: 23 reqs, GPU KV cache usage: 95.9%, "
    "Prefix cache hit rate: 0.0%"
)
V0 = (
    "INFO 01-23 06:33:37 metrics.py:396] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 16.7 "
    "tokens/s, Running: 16 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 92.1%, CPU KV cache usage: 0.0%."
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# any code point, surrogates and control characters included
ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=400)


def feed_all(lines: list[str]):
    p = Parser(year=2025)
    out = []
    for i, t in enumerate(lines, 1):
        out += p.feed(LogLine("h", i, t))
    out += p.flush()
    return p, out


@SETTINGS
@given(st.lists(ANY_TEXT, max_size=8))
@example(["\ud800\udfff INFO 13-45 99:99:99 [x.py:1] Running: 1 reqs", '{"log": 5}', '{"message": []}'])
@example(
    [
        "non-default args: {" * 50,
        "args: Namespace(" + "(" * 500,
        "INFO 02-30 10:00:00 [a.py:1] Running: 1 reqs, Waiting: 1 reqs, GPU KV cache usage: 1.0%",
    ]
)
def test_feed_never_raises_on_any_text(lines):
    p, _ = feed_all(lines)
    assert p.parse_errors == 0
    assert p.lines == len(lines)


@SETTINGS
@given(st.lists(st.binary(max_size=300), max_size=6))
def test_feed_never_raises_on_decoded_bytes(chunks):
    lines = [b.decode("utf-8", errors="replace") for b in chunks]
    p, _ = feed_all(lines)
    assert p.parse_errors == 0


@SETTINGS
@given(ANY_TEXT, ANY_TEXT)
def test_literal_helpers_never_raise(a, b):
    assert isinstance(parse_dict_repr("{" + a), dict)
    assert isinstance(parse_kv_repr(a + "=" + b), dict)


JUNK = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FFF, blacklist_characters="\r"), max_size=80
)


@SETTINGS
@given(st.lists(JUNK, max_size=3), st.lists(JUNK, max_size=3), st.sampled_from([V0, V1]))
def test_valid_stats_line_survives_surrounding_junk(before, after, line):
    # junk lines that are complete lines of their own (prefixed like any log line) must not eat the record
    p, out = feed_all(
        [f"WARNING 01-01 00:00:00 [junk.py:1] {j}" for j in before]
        + [line]
        + [f"ERROR 01-01 00:00:00 [junk.py:2] {j}" for j in after]
    )
    stats = [
        e for e in out if isinstance(e, StatsSample) and e.env.logger_file in ("loggers.py", "metrics.py")
    ]
    assert len(stats) == 1
    s = stats[0]
    if line is V1:
        assert (s.running, s.waiting, s.kv_usage_pct, s.prefix_hit_pct, s.fmt) == (21, 23, 95.9, 0.0, "v1")
    else:
        assert (s.running, s.waiting, s.swapped, s.kv_usage_pct, s.cpu_kv_usage_pct, s.fmt) == (
            16,
            0,
            0,
            92.1,
            0.0,
            "v0",
        )


@SETTINGS
@given(JUNK, JUNK, st.sampled_from([V0, V1]))
def test_valid_stats_line_inside_a_wrapped_physical_line(head, tail, line):
    # a tqdm bar before it (\r) and unrelated junk after a \r: the record is still read exactly
    p, out = feed_all([head + "\r" + line + "\r" + tail])
    stats = [
        e for e in out if isinstance(e, StatsSample) and e.env.logger_file in ("loggers.py", "metrics.py")
    ]
    assert len(stats) == 1 and stats[0].running in (21, 16)


@SETTINGS
@given(st.lists(JUNK, max_size=3), st.lists(JUNK, max_size=3), st.sampled_from([V0, V1]))
def test_valid_stats_line_between_raw_junk_lines(before, after, line):
    # unprefixed junk (tracebacks, wrapper output, half lines) around a complete record
    p, out = feed_all(before + [line] + after)
    stats = [
        e for e in out if isinstance(e, StatsSample) and e.env.logger_file in ("loggers.py", "metrics.py")
    ]
    assert len(stats) == 1 and stats[0].env.lineno == len(before) + 1
    assert (stats[0].running, stats[0].kv_usage_pct) in ((21, 95.9), (16, 92.1))


_FLAG_NAMES = startup._HINT_FLAG_NAMES


def _spelled(flag: str):
    """flag with each "_" drawn as "_" or "-" (vLLM's messages use both, even mixed)."""
    parts = flag.split("_")
    n = len(parts) - 1
    return st.lists(st.sampled_from("_-"), min_size=n, max_size=n).map(
        lambda seps: parts[0] + "".join(s + p for s, p in zip(seps, parts[1:], strict=True))
    )


# messages made of hint verbs and their endings, hint flags, what goes between them, numbers, noise
_HINT_TEXT = st.lists(
    st.one_of(
        st.sampled_from(["increas", "Decreas", "reduc", "Lower", "rais", "set", "Set", "e", "ing", "ting"]),
        st.sampled_from(_FLAG_NAMES).flatmap(_spelled),
        st.sampled_from([" ", "  ", "\t", "the ", "value of ", "`", "'", "--", " to ", "=", "at least "]),
        st.from_regex(r"\d{1,4}(\.\d)?|True|False", fullmatch=True),
        st.text(alphabet="aeirst_-` ", max_size=6),
    ),
    max_size=14,
).map("".join)


@SETTINGS
@given(_HINT_TEXT)
def test_hints_cheap_test_loses_no_hint(msg: str) -> None:
    """_hints tries its pattern only when the message names a flag (any mix of _ and -): the same
    hints as trying it on every message."""
    ctx = Ctx("x", 1, level="WARNING")
    got = startup._hints(None, msg, ctx)
    saved = startup._HINT_FLAG_NAMES
    try:
        startup._HINT_FLAG_NAMES = ("",)  # "" is in every message: the pattern is always tried
        assert startup._hints(None, msg, ctx) == got
    finally:
        startup._HINT_FLAG_NAMES = saved


@SETTINGS
@given(_HINT_TEXT)
@example("Try Decreasing `max_model_len` or Increase --max-num-seqs to 8; set max_num_batched_tokens=2048")
@example("Lower the value of gpu-memory_utilization to at least 0.8, then raise enforce_eager to True")
def test_hint_matches_are_what_finditer_gives(msg: str) -> None:
    """The hint pattern tried only where a verb stem begins finds what trying it everywhere finds."""
    got = [(h.span(), h.groupdict()) for h in startup._hint_matches(msg)]
    assert got == [(h.span(), h.groupdict()) for h in startup._HINT_RE.finditer(msg)]
