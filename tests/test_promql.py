"""The small PromQL meanings shared by dashboards, rules, the history reader and Settings."""

from __future__ import annotations

import pytest

from observe.errors import ConfigError
from observe.metrics import names, promql


def test_fold_joins_every_exposed_name_newest_first() -> None:
    exposed = names.exposed_names("vllm:kv_cache_usage_perc")
    assert len(exposed) >= 2  # renamed once at least (gpu_cache_usage_perc)
    expr = promql.fold("vllm:kv_cache_usage_perc", "max({m})")
    assert expr == " or ".join(f"max({m})" for m in exposed)
    assert promql.fold("not:in_the_catalog", "{m}") == ""


def test_name_regex_matches_the_same_names_as_the_fold() -> None:
    import re

    rx = re.compile(promql.name_regex("vllm:inter_token_latency_seconds", "(_bucket|_sum|_count)?"))
    for m in names.exposed_names("vllm:inter_token_latency_seconds"):
        assert rx.fullmatch(m + "_bucket") and rx.fullmatch(m)
    assert not rx.fullmatch("vllm:e2e_request_latency_seconds_bucket")
    assert promql.name_regex("x:unknown") == "(x:unknown)"


@pytest.mark.parametrize(
    "text, secs",
    [
        ("30m", 1800),
        ("1h30m", 5400),
        ("90s", 90),
        ("500ms", 0.5),
        ("2d", 172800),
        ("1w", 604800),
        ("1y", 31536000),
    ],
)
def test_durations_in_both_forms(text, secs) -> None:
    assert promql.duration_seconds(text, strict=True) == secs
    assert promql.parse_duration(text) == secs


def test_duration_forms_people_type_but_prometheus_does_not() -> None:
    assert promql.duration_seconds("1.5h") == 5400
    assert promql.duration_seconds("1.5h", strict=True) is None
    assert promql.duration_seconds("6H") == 6 * 3600
    assert promql.duration_seconds("6H", strict=True) is None
    assert promql.duration_seconds("15") is None
    assert promql.duration_seconds("15", numbers=True) == 15
    assert promql.parse_duration(5, numbers=True) == 5.0
    assert promql.duration_seconds("0s", strict=True) == 0


@pytest.mark.parametrize("bad", ["", "h", "1x", "-5", "-1h", "1h 30m", "forever", "1h30", "6hours", "6"])
def test_bad_durations(bad) -> None:
    assert promql.duration_seconds(bad, strict=True) is None
    with pytest.raises(ConfigError, match="not a duration"):
        promql.parse_duration(bad)


def test_a_duration_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="positive"):
        promql.parse_duration("0s")


@pytest.mark.parametrize("s", [120, 180, 3600, 90, 0, 7200])
def test_format_duration_reads_back(s) -> None:
    assert promql.duration_seconds(promql.format_duration(s), strict=True) == s
    assert promql.format_duration(180) == "3m" and promql.format_duration(90) == "90s"


def test_selector_grammar() -> None:
    assert promql.parse_selector('{namespace="llm", model_name=~"llama.*"}') == [
        ("namespace", "=", "llm"),
        ("model_name", "=~", "llama.*"),
    ]
    assert promql.selector_text(' a!="b" ,c!~"d\\"e" ') == 'a!="b",c!~"d\\"e"'
    assert promql.parse_selector("") == [] and promql.parse_selector("{}") == []
    assert promql.unbraced(' {job=~".*/vllm"} ') == 'job=~".*/vllm"'
    for bad in ("namespace=llm", 'a="b" c="d"', '__name__="x"', "}{", 'a="b",,'):
        with pytest.raises(ConfigError):
            promql.parse_selector(bad)
