"""The committed dashboards are clean current Grafana JSON: no legacy (Angular-era) field and no null
but the base threshold step's value; the old heatmap is the current heatmap panel; `clean` drops
exactly what it says on a model that has each legacy field."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from observe.monitoring import dashjson
from observe.monitoring.dashboards.common import GRAFANA_VERSION, SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "dashboards").glob("*.json"))


def _walk(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield path + (k,), k, v
            yield from _walk(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, path + (i,))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_legacy_fields_and_no_nulls(path: Path):
    model = json.loads(path.read_text())
    assert model["schemaVersion"] == SCHEMA_VERSION == 42
    assert not dashjson.LEGACY["dashboard"] & set(model)
    for panel in model["panels"]:
        assert not dashjson.LEGACY["panel"] & set(panel), panel["title"]
        if panel["type"] == "heatmap":
            assert not dashjson.LEGACY["heatmap"] & set(panel), panel["title"]
            assert panel["options"]["calculate"] is False
        for t in panel.get("targets", []):
            assert not dashjson.LEGACY["target"] & set(t), panel["title"]
    for var in model["templating"]["list"]:
        assert not dashjson.LEGACY["variable"] & set(var)
    nulls = [p for p, k, v in _walk(model) if v is None]
    assert all(p[-3:-1] == ("steps", 0) and p[-1] == "value" for p in nulls), nulls


def test_clean_drops_each_legacy_field_and_keeps_the_rest():
    model = {
        "rows": [],
        "style": "dark",
        "id": None,
        "title": "t",
        "timepicker": {"nowDelay": None, "time_options": ["5m"], "refresh_intervals": ["5s"]},
        "templating": {"list": [{"name": "job", "useTags": False, "regex": None, "query": "q"}]},
        "panels": [
            {
                "type": "timeseries",
                "span": None,
                "height": None,
                "error": False,
                "title": "p",
                "mappings": [],
                "fieldConfig": {
                    "defaults": {
                        "thresholds": {
                            "steps": [
                                {"color": "green", "value": None, "op": "gt", "index": 0},
                                {"color": "red", "value": 5, "line": True},
                            ]
                        }
                    }
                },
                "targets": [{"expr": "up", "query": "up", "step": 10, "intervalFactor": 2, "refId": "A"}],
            },
            {
                "type": "heatmap",
                "title": "h",
                "cards": {},
                "hideZeroBuckets": True,
                "color": {"colorScale": "sqrt", "exponent": 0.5},
                "options": [],
            },
        ],
    }
    out = dashjson.clean(model)
    assert out == {
        "title": "t",
        "timepicker": {"refresh_intervals": ["5s"]},
        "templating": {"list": [{"name": "job", "query": "q"}]},
        "panels": [
            {
                "type": "timeseries",
                "title": "p",
                "fieldConfig": {
                    "defaults": {
                        "thresholds": {
                            "steps": [{"color": "green", "value": None}, {"color": "red", "value": 5}]
                        }
                    }
                },
                "targets": [{"expr": "up", "refId": "A"}],
            },
            {"type": "heatmap", "title": "h", "options": out["panels"][1]["options"]},
        ],
    }
    assert out["panels"][1]["options"]["filterValues"] == {"le": 1e-9}
    assert out["panels"][1]["options"]["color"]["scale"] == "exponential"


def test_compose_pins_the_grafana_whose_schema_the_boards_are_at():
    """compose's Grafana is the release whose dashboard schema the boards carry (13.2.3 writes 42:
    @grafana/schema 13.2.3's defaultDashboard), so Grafana neither migrates them on load nor sees a
    schema newer than its own; a change to one without the other fails here."""
    compose = (ROOT / "compose" / "docker-compose.yml").read_text()
    (tag,) = re.findall(r"image: grafana/grafana:\$\{GRAFANA_TAG:-([^}]+)\}", compose)
    assert tag == GRAFANA_VERSION and int(tag.split(".")[0]) >= 12
    assert {json.loads(p.read_text())["schemaVersion"] for p in FILES} == {SCHEMA_VERSION}


def _panels(panels: list[dict]):
    for p in panels:
        yield p
        yield from _panels(p.get("panels", []))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_nothing_grafanas_schema_migrations_after_39_rewrite(path: Path):
    """Grafana's dashboard migrator past 39 (grafana/grafana apps/dashboard/pkg/migration/schemaversion/
    v40.go: a non-string `refresh` becomes ""; v41.go: `timepicker.time_options` is dropped; v42.go: a
    `custom.hideFrom` override with `viz: true` gains `tooltip: true`; v43.go: `formatTime`
    transformations become `convertFieldType`) finds none of its inputs here, so writing the
    `schemaVersion` 42 of the pinned Grafana 13.2.3 (and a backend at 43) changes no panel: Grafana loads
    the boards as committed."""
    model = json.loads(path.read_text())
    assert isinstance(model["refresh"], str)
    assert "time_options" not in model.get("timepicker", {})
    for panel in _panels(model["panels"]):
        props = [
            p for o in panel.get("fieldConfig", {}).get("overrides", []) for p in o.get("properties", [])
        ]
        assert not [
            p for p in props if p.get("id") == "custom.hideFrom" and (p.get("value") or {}).get("viz")
        ]
        assert "formatTime" not in {t["id"] for t in panel.get("transformations", [])}, panel["title"]
