"""reprs.literal reads the common literal forms (plain quoted strings, integers, decimals, names)
without literal_eval, and parse_kv_repr walks a config repr once: what they give must be exactly
what literal_eval and the two walks give, for any text."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from observe.parse import parse_kv_repr
from observe.parse.reprs import MAX_LITERAL, _evaluated, _split_top, literal

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # literal_eval of "\\ "


def reference(text: str):
    """literal() without its fast paths: every value through literal_eval (then JSON)."""
    t = text.strip()
    return t if len(t) > MAX_LITERAL else _evaluated(t)


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


_TOKENS = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.text(alphabet="0123456789-._e+", max_size=8),
    st.text(max_size=12).map(repr),
    st.text(alphabet="ab'\"\\ ", max_size=8).map(lambda s: "'" + s + "'"),
    st.text(alphabet="ab'\"\\ ", max_size=8).map(lambda s: '"' + s + '"'),
    st.sampled_from(["None", "True", "False", "true", "false", "null", "none", "'", '"', "''", "'a' 'b'"]),
    st.text(max_size=10),
)


@settings(max_examples=1500, deadline=None)
@given(_TOKENS, st.sampled_from(["", " ", "  \t"]))
@example("007", "")
@example("-0", "")
@example("01.50", "")
@example("1_000", "")
@example("'it''s'", "")
@example("'a\\'b'", "")
@example("'say \"hi\"'", "")
@example("'ü'", " ")
@example("0x10", "")
@example("٣", "")  # a non-ASCII digit: not a Python literal
def test_literal_is_what_literal_eval_gives(token: str, pad: str) -> None:
    text = pad + token + pad
    assert same(literal(text), reference(text)), text


def test_kv_repr_of_a_real_config_line_reads_each_value_type() -> None:
    # the V0 "Initializing an LLM engine (v0.6.3) with config:" form, shortened
    got = parse_kv_repr(
        "model='meta-llama/Llama-3.1-8B-Instruct', max_seq_len=8192, gpu_memory_utilization=0.9, "
        "enforce_eager=False, quantization=None, served_model_name='x \"y\"', seed=0)"
    )
    assert got == {
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "max_seq_len": 8192,
        "gpu_memory_utilization": 0.9,
        "enforce_eager": False,
        "quantization": None,
        "served_model_name": 'x "y"',
        "seed": 0,
    }


def kv_reference(text: str, keys=None) -> dict:
    """parse_kv_repr as it was: the body split twice (without, then with its last ")"), every value
    through literal_eval."""
    t = text.rstrip()
    closed = False
    if t.endswith(")"):
        _, ok = _split_top(t[:-1])
        if ok:
            t, closed = t[:-1], True
    parts, balanced = _split_top(t)
    ends_clean = closed or t.endswith((")", "}", "]", "'", '"', ",", ">"))
    if parts and (not balanced or not ends_clean):
        parts = parts[:-1]
    out = {}
    for p in parts:
        k, sep, v = p.partition("=")
        k = k.strip()
        if not sep or not k.isidentifier() or (keys is not None and k not in keys):
            continue
        out[k] = reference(v.strip())
    return out


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="ab =,'\"\\()[]{}<>1.", max_size=40))
@example("model='x', seed=0)")
@example("Namespace(a=1, b='c)')")
@example("a=(1, 2)), b=3)")
@example("a='x\\')")
def test_kv_repr_is_what_the_two_walks_give(s: str) -> None:
    assert _eq(parse_kv_repr(s), kv_reference(s))


def _eq(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
