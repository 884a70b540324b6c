"""Nothing but compose's rule file goes into alerts/ (compose's Prometheus loads every file there as a
rule file): the PrometheusRule manifest is `observe generate kubernetes`'s, under deploy/."""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from typer.testing import CliRunner

from observe.cli import app
from observe.monitoring import alerts

ROOT = Path(__file__).resolve().parents[1]


def test_prometheus_operator_without_out_refuses_and_names_generate_kubernetes(tmp_path: Path):
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = CliRunner().invoke(app, ["generate", "alerts", "--format", "prometheus-operator"])
    finally:
        os.chdir(cwd)
    assert r.exit_code != 0
    assert "observe generate kubernetes" in r.output
    assert "Traceback" not in r.output
    assert not (tmp_path / "alerts").exists(), "nothing written into alerts/"


def test_prometheus_operator_refuses_a_prometheus_rule_folder(tmp_path: Path):
    rules = tmp_path / "rules"
    assert CliRunner().invoke(app, ["generate", "alerts", "--out", str(rules)]).exit_code == 0
    before = sorted(p.name for p in rules.iterdir())
    r = CliRunner().invoke(
        app, ["generate", "alerts", "--format", "prometheus-operator", "--out", str(rules)]
    )
    assert r.exit_code != 0 and "observe generate kubernetes" in r.output
    assert sorted(p.name for p in rules.iterdir()) == before == [alerts.RULES_FILE]


def test_prometheus_operator_with_another_out_writes_the_manifest(tmp_path: Path):
    r = CliRunner().invoke(
        app, ["generate", "alerts", "--format", "prometheus-operator", "--out", str(tmp_path / "k8s")]
    )
    assert r.exit_code == 0, r.output
    assert yaml.safe_load((tmp_path / "k8s" / "prometheusrule.yml").read_text())["kind"] == "PrometheusRule"


def test_plain_alerts_default_is_still_alerts(tmp_path: Path):
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = CliRunner().invoke(app, ["generate", "alerts"])
    finally:
        os.chdir(cwd)
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (tmp_path / "alerts").iterdir()) == [alerts.RULES_FILE]


def test_the_committed_alerts_folder_holds_only_rule_files():
    """Every file compose's Prometheus loads is a Prometheus rule file (groups:), none a manifest."""
    for p in (ROOT / "alerts").iterdir():
        doc = yaml.safe_load(p.read_text())
        assert set(doc) == {"groups"}, p.name
