"""The rules' and boards' PromQL against the incompatibilities Prometheus 3.0's migration guide lists
(prometheus.io/docs/prometheus/latest/migration, "PromQL"), read from the expressions themselves, so
they hold where no Prometheus 3 promtool is at hand (tests/test_alerts.py runs one where it is):

- `holt_winters` is renamed `double_exponential_smoothing` (and behind a feature flag);
- range selectors and the lookback are left-open: a subquery at the default step (the evaluation
  interval) loses a whole interval of its window, so each subquery names a step;
- classic histograms' `le` (and summaries' `quantile`) are normalised on ingestion (`1.0` → `1`), so
  a bound is matched by a regex that takes both texts, never by an exact `le="1.0"`;
- a regex `.` matches a newline too: a bare `.` is only ever part of `.*` / `.+` (match anything).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MATCHER = re.compile(r'(\w+)\s*(=~|!~|=|!=)\s*"((?:[^"\\]|\\.)*)"')
SUBQUERY = re.compile(r"\[([0-9a-z$_{}]+):([0-9a-z$_{}]*)\]")
# vLLM's bucket text → what Prometheus 3 stores (tests/alerts/vllm_buckets_test.yml feeds both forms)
LE_FORMS = [("1.0", "1"), ("2.0", "2"), ("10.0", "10"), ("0.1", "0.1"), ("0.05", "0.05"), ("+Inf", "+Inf")]


def _targets(node, where: str, out: list[tuple[str, str]]) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("expr"), str):
            out.append((where, node["expr"]))
        for v in node.values():
            _targets(v, f"{where.split(': ')[0]}: {node['title']}" if "title" in node else where, out)
    elif isinstance(node, list):
        for v in node:
            _targets(v, where, out)


def _exprs() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for f in sorted((ROOT / "alerts").glob("*.yml")):
        for g in yaml.safe_load(f.read_text())["groups"]:
            out += [(f"{f.name}: {r.get('alert') or r.get('record')}", r["expr"]) for r in g["rules"]]
    for f in sorted((ROOT / "dashboards").glob("*.json")):
        _targets(json.loads(f.read_text()), f.name, out)
    return out


EXPRS = _exprs()


def _regexes() -> list[tuple[str, str, str]]:
    """(where, label, regex text) of every =~ / !~ matcher (PromQL string escapes undone)."""
    return [
        (where, label, re.sub(r"\\(.)", r"\1", text))
        for where, expr in EXPRS
        for label, op, text in MATCHER.findall(expr)
        if op in ("=~", "!~")
    ]


def test_expressions_were_found():
    assert len(EXPRS) > 100 and any("le=~" in e for _, e in EXPRS)


def test_no_function_that_prometheus_3_renamed():
    assert [w for w, e in EXPRS if re.search(r"\bholt_winters\s*\(", e)] == []


def test_every_subquery_names_its_step():
    """`x[2m:]` steps at the evaluation interval; Prometheus 3 drops the point at the window's start."""
    subqueries = [(w, m) for w, e in EXPRS for m in SUBQUERY.findall(e)]
    assert subqueries, "the stuck alert's subquery"
    assert [(w, r) for w, (r, step) in subqueries if not step] == []


def test_le_is_matched_by_regexes_taking_both_texts_of_a_bound():
    exact = [
        (w, m) for w, e in EXPRS for m in MATCHER.findall(e) if m[0] in ("le", "quantile") and "~" not in m[1]
    ]
    assert exact == []
    le = [(w, rx) for w, label, rx in _regexes() if label == "le"]
    assert le
    for where, rx in le:
        for vllm_text, prom3_text in LE_FORMS:
            assert bool(re.fullmatch(rx, vllm_text)) == bool(re.fullmatch(rx, prom3_text)), (
                where,
                rx,
                vllm_text,
            )


@pytest.mark.parametrize("rx", sorted({rx for _, _, rx in _regexes()}))
def test_a_regex_dot_only_means_match_anything(rx: str):
    """Prometheus 3's `.` matches a newline too: harmless only where `.` stands for 'anything'."""
    bare = re.sub(r"\\.", "", rx)  # drop escaped characters (`\.` is a literal dot)
    assert re.sub(r"\.[*+]", "", bare).count(".") == 0, rx
