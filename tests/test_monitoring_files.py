"""The generators' one way to disk (observe.monitoring.files): each artefact's writer goes through it."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.errors import ConfigError
from observe.monitoring import alerts, dashboards, kubernetes


@pytest.mark.parametrize(
    ("write", "what"),
    [
        (lambda d: dashboards.write_dashboards(d), "dashboards"),
        (lambda d: kubernetes.write_manifests(d), "Kubernetes manifests"),
        (lambda d: alerts.write_alerts(d), "alerts"),
        (lambda d: alerts.write_alerts(d, "prometheus-operator"), "alerts"),
    ],
)
def test_a_folder_that_is_a_file_is_one_clear_error_naming_what(tmp_path: Path, write, what: str) -> None:
    blocker = tmp_path / "out"
    blocker.write_text("a file, not a folder")
    with pytest.raises(ConfigError, match=f"cannot write {what} to {blocker}"):
        write(blocker)


def test_each_writer_writes_every_text_it_renders(tmp_path: Path) -> None:
    got = dashboards.write_dashboards(tmp_path / "d")
    assert sorted(p.name for p in got) == sorted(dashboards.render(None))
    assert all(p.read_text(encoding="utf-8") for p in got)
    (op,) = alerts.write_alerts(tmp_path / "a", "prometheus-operator")
    assert op.name == "prometheusrule.yml" and op.read_text(
        encoding="utf-8"
    ) == alerts.prometheus_rule_manifest(None)
