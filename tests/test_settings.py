"""One settings object: a threshold set once changes the finding, the plot and the alert together."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from observe import pipeline, report, settingsfile
from observe import settings as settings_mod
from observe.diagnosis import InstanceBuilder
from observe.errors import ConfigError
from observe.monitoring import alerts
from observe.monitoring.recording_rules import le_at_most, promql_regex
from observe.rules import table
from observe.rules.context import Context
from observe.settings import Settings
from tests.realvllm import vllm_source

DATA = Path(__file__).parent / "data"
# real V1 log: KV usage peaks at 76.8 % (below the default 90/95, above 70/75)
LOG_057 = next((DATA / "corpus").glob("057-*.log"))


def _observe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "observe.cli", *args], capture_output=True, text=True, timeout=120
    )


def _alert_expr(s: Settings, name: str) -> str:
    return next(r["expr"] for r in alerts.alert_rules(s) if r["alert"] == name)


def test_the_settings_file_moves_detector_plot_and_alert_together(tmp_path: Path) -> None:
    cfg = tmp_path / "observe.yaml"
    cfg.write_text("kv_high_pct: 70\nkv_full_pct: 75\n")
    s = settings_mod.from_yaml(cfg.read_text())
    # the detector
    default = pipeline.diagnose_paths([LOG_057]).instances[0]
    tuned = pipeline.diagnose_paths([LOG_057], settings=s).instances[0]
    assert "kv_cache_saturated" not in {f.id for f in default.findings}
    assert "kv_cache_saturated" in {f.id for f in tuned.findings}
    assert tuned.stats["samples_kv_full"] > 0 == default.stats["samples_kv_full"]
    # the plot's dashed lines and their note
    html = report.render(pipeline.diagnose_paths([LOG_057], settings=s), "html", settings=s)
    assert "Dashed lines: 70 % and 75 %" in html
    assert "Dashed lines: 90 % and 95 %" in report.render(pipeline.diagnose_paths([LOG_057]), "html")
    # the alert rule
    assert _alert_expr(s, "VLLMKVCacheSaturated").endswith("> 0.75")
    assert _alert_expr(Settings(), "VLLMKVCacheSaturated").endswith("> 0.95")
    # and the CLI reads the same file for all of them
    out = _observe("diagnose", str(LOG_057), "--config", str(cfg), "--format", "json")
    assert out.returncode == 0, out.stderr
    assert "kv_cache_saturated" in {f["id"] for f in json.loads(out.stdout)["findings"]}
    rules = tmp_path / "rules"
    assert _observe("generate", "alerts", "--out", str(rules), "--config", str(cfg)).returncode == 0
    text = (rules / alerts.RULES_FILE).read_text()
    assert "instance:vllm_kv_cache_usage:ratio[5m]) > 0.75" in text


@pytest.mark.parametrize("slo", [0.05, 0.1, 0.2])
def test_the_inter_token_slo_is_one_number(slo: float) -> None:
    """The ITL finding, its title and the ITL burn-rate rules read the same itl_slo_seconds."""
    import pandas as pd

    s = Settings(itl_slo_seconds=slo)
    frame = pd.DataFrame(
        {"itl_p95": [0.07, 0.12, 0.07]},
        index=pd.DatetimeIndex(
            pd.to_datetime(["2026-01-01 00:00:00", "2026-01-01 00:00:15", "2026-01-01 00:00:30"]), name="ts"
        ),
    )
    b = InstanceBuilder("x", settings=s)
    ctx = Context(summary=b.summary, config=b.config, frame=None, metrics=frame, settings=s)
    found = [f for f in table.run(ctx) if f.id == "itl_high"]
    assert bool(found) == (slo < 0.12)
    if found:
        assert f"{slo * 1000:.0f} ms" in found[0].title
    rec = {r["record"]: r["expr"] for r in alerts.recording_rules(s)}
    itl = [e for k, e in rec.items() if "itl_slo_errors" in k]
    le = f'le=~"{promql_regex(le_at_most(slo))}"'  # every bound at most the SLO, in every written form
    assert itl and all(le in e for e in itl)


def test_defaults_show_and_read_back(tmp_path: Path) -> None:
    out = _observe("config", "show")
    assert out.returncode == 0, out.stderr
    cfg = tmp_path / "shown.yaml"
    cfg.write_text(out.stdout)
    assert settings_mod.from_yaml(cfg.read_text()) == Settings()
    # every setting is shown with its note
    for f in settingsfile.describe(Settings()):
        assert f["note"] and re.search(rf"^{f['name']}:", out.stdout, re.M), f["name"]
    changed = _observe("config", "show", "--config", str(tmp_path / "c.yaml"))
    assert changed.returncode != 0 and "cannot read --config" in changed.stderr


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("kv_ful_pct: 90\n", "unknown setting"),
        ("kv_full_pct: lots\n", "must be a number"),
        ("kv_high_pct: 96\n", "must not be above kv_full_pct"),
        ("itl_slo_seconds: 0.12\n", "bucket bound"),
        ("- 1\n- 2\n", "mapping"),
        ("a: [\n", "not valid YAML"),
    ],
)
def test_bad_settings_are_one_clear_error(tmp_path: Path, text: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        settings_mod.from_yaml(text)
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(text)
    out = _observe("diagnose", str(LOG_057), "--config", str(cfg))
    assert out.returncode != 0 and needle in out.stderr and "Traceback" not in out.stderr


def test_to_yaml_is_valid_yaml_with_every_field() -> None:
    doc = yaml.safe_load(settingsfile.to_yaml(Settings()))
    assert set(doc) == {f["name"] for f in settingsfile.describe(Settings())}


def test_slo_buckets_are_vllms_own():
    """An SLO threshold may be any bucket bound vLLM has: TTFT up to 2,560 s and ITL up to 80 s as in
    vllm/v1/metrics/buckets.py (0.32.0 here; 0.34.0 has the same tuples), the older 10 s / 2.5 s ones a prefix."""
    tree = ast.parse(vllm_source("v1/metrics/buckets.py").read_text())
    theirs = {
        n.target.id: ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.AnnAssign)
        and isinstance(n.target, ast.Name)
        and n.target.id.endswith("_BUCKETS")
        and n.value is not None
    }
    assert settings_mod.TTFT_BUCKETS == theirs["TIME_TO_FIRST_TOKEN_BUCKETS"]
    assert settings_mod.ITL_BUCKETS == theirs["INTER_TOKEN_LATENCY_BUCKETS"]
    assert (
        settings_mod.from_mapping({"ttft_slo_seconds": 2560, "itl_slo_seconds": 80}).ttft_slo_seconds == 2560
    )
    with pytest.raises(ConfigError, match="bucket bound"):
        settings_mod.from_mapping({"ttft_slo_seconds": 3000})
