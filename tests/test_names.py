"""The metric catalog: every family real vLLM servers exposed is known, renames map to one name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from observe.metrics import names

DATA = Path(__file__).parent / "data" / "metrics"
DUMPS = sorted(DATA.glob("metrics-*.txt"))


def _families_and_samples(text: str) -> tuple[set[str], set[str]]:
    fams, samples = set(), set()
    for line in text.splitlines():
        m = re.match(r"# (?:TYPE|HELP) (\S+)", line)
        if m:
            fams.add(m.group(1))
        elif line.startswith(("vllm:", "process_", "python_", "http_")):
            samples.add(re.match(r"[^{ ]+", line).group(0))
    return fams, samples


def test_corpus_dumps_are_present():
    assert len(DUMPS) >= 10, "copy the corpus /metrics dumps into tests/data/metrics"


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name)
def test_every_family_and_sample_in_real_dumps_is_known(dump: Path):
    fams, samples = _families_and_samples(dump.read_text())
    assert fams or samples
    unknown = sorted(f for f in fams if not names.is_known_family(f))
    unknown += sorted(s for s in samples if names.split_sample_name(s) is None)
    assert unknown == []


@pytest.mark.parametrize(
    "exposed, expected",
    [
        ("vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"),
        ("vllm:kv_cache_usage_perc", "vllm:kv_cache_usage_perc"),
        ("vllm:time_per_output_token_seconds", "vllm:inter_token_latency_seconds"),
        ("vllm:gpu_prefix_cache_hits_total", "vllm:prefix_cache_hits_total"),
        ("vllm:gpu_prefix_cache_queries", "vllm:prefix_cache_queries_total"),
        ("vllm:num_preemptions", "vllm:num_preemptions_total"),
        ("vllm:num_preemptions_total", "vllm:num_preemptions_total"),
        ("vllm:time_in_queue_requests", "vllm:request_queue_time_seconds"),
        ("vllm:iteration_tokens_total", "vllm:iteration_tokens_total"),
        ("vllm:num_requests_waiting", "vllm:num_requests_waiting"),
    ],
)
def test_canonical_maps_old_and_new_names(exposed: str, expected: str):
    assert names.canonical(exposed) == expected


@pytest.mark.parametrize(
    "name",
    ["vllm:num_preemptions_totally", "vllm:nonexistent", "", "kv_cache_usage_perc", "vllm:iteration_tokens"],
)
def test_unknown_names_are_none(name: str):
    # vllm:iteration_tokens is a histogram family: only counters lose their _total
    assert names.canonical(name) is None


def test_split_sample_name_histogram_parts_and_created():
    assert names.split_sample_name("vllm:time_per_output_token_seconds_bucket") == (
        "vllm:inter_token_latency_seconds",
        "_bucket",
    )
    assert names.split_sample_name("vllm:num_preemptions_created") == (
        "vllm:num_preemptions_total",
        "_created",
    )
    assert names.split_sample_name("vllm:iteration_tokens_total_count") == (
        "vllm:iteration_tokens_total",
        "_count",
    )
    # a gauge has no _bucket
    assert names.split_sample_name("vllm:kv_cache_usage_perc_bucket") is None


def test_exposed_names_newest_first():
    assert names.exposed_names("vllm:kv_cache_usage_perc") == [
        "vllm:kv_cache_usage_perc",
        "vllm:gpu_cache_usage_perc",
    ]
    assert names.exposed_names("vllm:inter_token_latency_seconds")[-1] == "vllm:time_per_output_token_seconds"
    assert names.exposed_names("nope") == []


def test_catalog_is_consistent():
    seen: dict[str, str] = {}
    for key, metric in names.CATALOG.items():
        assert key == metric.canonical
        assert metric.type in names.METRIC_TYPES
        assert metric.names[0].exposed == key, "canonical = the newest exposed name"
        if metric.type == "counter":
            assert key.endswith("_total")
        for alias in metric.names:
            assert alias.exposed not in seen, f"{alias.exposed} under {seen.get(alias.exposed)} and {key}"
            seen[alias.exposed] = key
        if len(metric.names) > 1:
            assert all(a.until for a in metric.names[1:]), f"old aliases of {key} need an end date"


def test_every_section5_metric_is_catalogued():
    # names listed in VLLM-FORMATS.md §5 tables (spot list across V0, V1 and renames)
    for name in [
        "vllm:num_requests_swapped",
        "vllm:cpu_cache_usage_perc",
        "vllm:request_params_best_of",
        "vllm:spec_decode_efficiency",
        "vllm:lora_requests_info",
        "vllm:model_forward_time_milliseconds",
        "vllm:request_prefill_kv_computed_tokens",
        "vllm:kv_block_reuse_gap_seconds",
        "vllm:nixl_num_kv_expired_reqs_total",
        "vllm:kv_offload_size",
        "vllm:corrupted_requests_total",
        "vllm:engine_sleep_state",
        "vllm:avg_generation_throughput_toks_per_s",
        "vllm:tokens_total",
    ]:
        assert names.canonical(name) is not None, name


def test_observe_metrics_are_prefixed_and_disjoint():
    assert {
        "observe_up",
        "observe_finding",
        "observe_recommendation_info",
        "observe_vllm_engine_errors_total",
        "observe_scrape_errors_total",
        "observe_log_lines_total",
    } <= set(names.OBSERVE_METRICS)
    for name, help_ in names.OBSERVE_METRICS.items():
        assert name.startswith("observe_") and help_
        assert name not in names.CATALOG


def test_names_is_a_leaf_module():
    tree = ast.parse(Path(names.__file__).read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", "dataclasses", "typing", "observe"}
    assert [
        a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "observe.metrics"
        for a in n.names
    ] == ["histograms", "recent"]
    root = Path(names.__file__).parent
    for leaf, allowed in (("recent", {"__future__"}), ("catalog", {"__future__", "dataclasses"})):
        data = ast.parse((root / f"{leaf}.py").read_text())
        assert {n.module for n in ast.walk(data) if isinstance(n, ast.ImportFrom)} == allowed
