"""The metric catalog covers every `vllm:` metric defined in vLLM 0.32.0's and 0.33.0's source
(tests/data/vllm-metrics/, extracted from the wheels by tools/vllm_metric_names.py; provenance in
tests/data/PROVENANCE.md), with the type the source gives; observe/metrics/recent.py is the tool's
output; the extractor finds each way vLLM defines a metric."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from observe.metrics import names

ROOT = Path(__file__).resolve().parents[1]
RELEASES = sorted((ROOT / "tests" / "data" / "vllm-metrics").glob("vllm-*.json"))


def tool():
    spec = importlib.util.spec_from_file_location(
        "vllm_metric_names", ROOT / "tools" / "vllm_metric_names.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("release", RELEASES, ids=lambda p: p.stem)
def test_catalog_covers_every_metric_of_the_release(release: Path):
    data = json.loads(release.read_text())
    assert len(data["metrics"]) > 100 and len(data["sha256"]) == 64
    missing = [m["name"] for m in data["metrics"] if names.canonical(m["name"]) is None]
    assert not missing, missing
    wrong = []
    for m in data["metrics"]:
        catalogued = names.CATALOG[names.canonical(m["name"])].type
        # vLLM defines its *_info metrics as gauges of value 1; the catalog calls them info
        if catalogued != m["type"] and not (catalogued == "info" and m["type"] == "gauge"):
            wrong.append((m["name"], catalogued, m["type"]))
    assert not wrong, wrong


def test_the_families_of_issue_22_are_there():
    for family in (
        "vllm:num_requests_kv_fetch_by_stage",
        "vllm:nixl_xfer_time_seconds",
        "vllm:nixl_num_notifications_after_expiry_total",
        "vllm:mooncake_xfer_time_seconds",
        "vllm:kv_offload_store_bytes_total",
        "vllm:kv_offload_tiering_chunk_hits_total",
    ):
        assert names.canonical(family) == family, family


def test_names_recent_is_the_tools_output():
    assert tool().catalog(RELEASES) == (ROOT / "observe" / "metrics" / "recent.py").read_text(), (
        "observe/metrics/recent.py drifted: PYTHONPATH=. python tools/vllm_metric_names.py --catalog "
        "tests/data/vllm-metrics/vllm-*.json > observe/metrics/recent.py"
    )


def test_extractor_finds_each_way_vllm_defines_a_metric():
    src = '''
from prometheus_client import Counter, Gauge, Histogram
class _Names:
    LOAD = "vllm:demo_load_bytes"
def _vllm_metric_name(n):
    return f"vllm:{n}"
DUR = "demo_duration_seconds"
g = Gauge("vllm:demo_in_flight", "In flight.", ["op"])
c = self._counter_cls(name="vllm:demo_events", documentation="Events.")
defs = {_Names.LOAD: OffloadingCounterMetadata(documentation="Bytes loaded."),
        _vllm_metric_name(DUR): OffloadingHistogramMetadata(documentation="Duration.")}
metrics[_Names.LOAD] = OffloadingCounterMetadata(documentation="Bytes loaded.")
name = "vllm:demo_config_info"
info = self._gauge_cls(name=name, documentation="Config.")
"""The docs mention vllm:demo_not_a_metric."""
'''
    metrics, mentions = tool().extract({"vllm/demo.py": src})
    got = {m["name"]: (m["type"], m["help"]) for m in metrics}
    assert got == {
        "vllm:demo_in_flight": ("gauge", "In flight."),
        "vllm:demo_events_total": ("counter", "Events."),
        "vllm:demo_load_bytes_total": ("counter", "Bytes loaded."),
        "vllm:demo_duration_seconds": ("histogram", "Duration."),
        "vllm:demo_config_info": ("gauge", "Config."),
    }
    assert mentions == ["vllm:demo_not_a_metric"]
