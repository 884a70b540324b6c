"""The GPU recording rules (observe.monitoring.recording_rules.gpu_rules): their promtool tests
(tests/alerts/vllm_gpu_test.yml, dcgm-exporter's series in both label forms) fail when a form is
not normalised or the idle threshold moves; they read vLLM only through the folded instance rules
and dcgm-exporter only through its default counters."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from observe.errors import ConfigError
from observe.monitoring import alerts, recording_rules
from observe.settings import Settings
from tests.dashboardq import DCGM
from tests.services import have, promql_metric_names

ROOT = Path(__file__).resolve().parents[1]
GPU_TEST = ROOT / "tests" / "alerts" / "vllm_gpu_test.yml"
needs_promtool = pytest.mark.skipif(
    not have("promtool"), reason="promtool (Debian `prometheus`) not installed"
)


def _promtool_gpu_test(tmp_path: Path, s: Settings) -> subprocess.CompletedProcess[str]:
    """tests/alerts/vllm_gpu_test.yml against the rules rendered from ``s`` (same relative layout)."""
    (tmp_path / "alerts").mkdir()
    for name, text in alerts.render_rules(s).items():
        (tmp_path / "alerts" / name).write_text(text)
    (tmp_path / "tests" / "alerts").mkdir(parents=True)
    shutil.copy(GPU_TEST, tmp_path / "tests" / "alerts" / GPU_TEST.name)
    return subprocess.run(
        ["promtool", "test", "rules", str(tmp_path / "tests" / "alerts" / GPU_TEST.name)],
        capture_output=True,
        text=True,
    )


@needs_promtool
def test_gpu_tests_pass_on_the_default_rules(tmp_path: Path):
    r = _promtool_gpu_test(tmp_path, Settings())
    assert r.returncode == 0, r.stdout + r.stderr


@needs_promtool
@pytest.mark.parametrize("keep", ["exported", "as_came"])
def test_gpu_tests_fail_when_one_label_form_is_dropped(tmp_path: Path, monkeypatch, keep: str):
    original = recording_rules._dcgm_normalised

    def one_form(s: Settings, template: str) -> str:
        left, right = original(s, template).split("\nor\n")
        return left if keep == "exported" else right

    monkeypatch.setattr(recording_rules, "_dcgm_normalised", one_form)
    r = _promtool_gpu_test(tmp_path, Settings())
    assert r.returncode != 0
    # the pod whose GPUs arrive only in the dropped form goes missing
    assert ("vllm-qwen-0" if keep == "exported" else "vllm-llama-0") in r.stdout + r.stderr


@needs_promtool
def test_gpu_tests_catch_a_changed_idle_threshold(tmp_path: Path):
    # team-a's second GPU idles at 1 %: below a 0.5 % threshold it is busy, and the GPU-hours halve
    r = _promtool_gpu_test(tmp_path, Settings(gpu_idle_util_pct=0.5))
    assert r.returncode != 0 and "pod:dcgm_idle_gpu_hours:sum1h" in r.stdout + r.stderr


def test_gpu_rules_read_vllm_only_through_the_instance_rules_and_dcgm_defaults():
    rules = recording_rules.gpu_rules(Settings())
    recorded = {r["record"] for r in recording_rules.recording_rules(Settings())}
    for rule in rules:
        assert "vllm:" not in rule["expr"], rule["record"]
        for metric in promql_metric_names(rule["expr"]):
            assert metric in recorded or metric in DCGM, (rule["record"], metric)
    assert {r["record"] for r in rules} <= recorded


def test_gpu_rules_follow_the_rate_window_and_join_labels():
    s = Settings(rate_window="2m", rule_by=("namespace", "pod", "instance"))
    exprs = {r["record"]: r["expr"] for r in recording_rules.gpu_rules(s)}
    assert "pod:vllm_tokens_per_joule:ratio_rate2m" in exprs
    assert "[2m]" in exprs["gpu:dcgm_energy_joules:rate2m"]
    assert "on (namespace, pod)" in exprs["pod:vllm_tokens_per_joule:ratio_rate2m"]


@pytest.mark.parametrize("pct", [-1, 101])
def test_bad_idle_threshold_is_a_config_error(pct: float):
    with pytest.raises(ConfigError, match="gpu_idle_util_pct"):
        Settings(gpu_idle_util_pct=pct)
