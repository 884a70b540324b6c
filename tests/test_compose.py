"""The compose stack's files: docker-compose accepts them, Prometheus and Alertmanager accept
their configs (promtool, amtool, the real render script), routing and inhibition behave, vLLM writes
its own log file through the generated logging configuration (no wrapper process)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import requests
import yaml

from tests.services import alertmanager, free_port, have, wait_until

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "compose"


def compose_doc() -> dict:
    return yaml.safe_load((COMPOSE / "docker-compose.yml").read_text())


def render_alertmanager(tmp: Path, **env: str) -> Path:
    """Run compose/render-and-run.sh (sh + awk, as in the container) with ALERTMANAGER_BIN=true."""
    out = tmp / f"am-{len(list(tmp.iterdir()))}.yml"
    full_env = {
        "PATH": os.environ["PATH"],
        "AM_CONFIG_TEMPLATE": str(COMPOSE / "alertmanager.yml"),
        "AM_CONFIG_OUT": str(out),
        "ALERTMANAGER_BIN": "true",
        **env,
    }
    r = subprocess.run(
        ["sh", str(COMPOSE / "render-and-run.sh")], env=full_env, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    return out


# ---------------------------------------------------------------- docker-compose


@pytest.mark.skipif(not have("docker-compose"), reason="docker-compose (Debian package) not installed")
def test_docker_compose_config_accepts_the_file():
    env = {**os.environ, "GF_ADMIN_PASSWORD": "test-only"}
    r = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE / "docker-compose.yml"), "config"],
        cwd=COMPOSE,
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    resolved = yaml.safe_load(r.stdout)
    assert resolved["services"]["grafana"]["environment"]["GF_SECURITY_ADMIN_PASSWORD"] == "test-only"


@pytest.mark.skipif(not have("docker-compose"), reason="docker-compose (Debian package) not installed")
def test_grafana_password_has_no_default():
    env = {k: v for k, v in os.environ.items() if k != "GF_ADMIN_PASSWORD"}
    r = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE / "docker-compose.yml"), "config"],
        cwd=COMPOSE,
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0
    assert "GF_ADMIN_PASSWORD" in r.stderr


def test_services_and_wiring():
    doc = compose_doc()
    s = doc["services"]
    assert {"vllm", "vllm-cpu", "observe", "prometheus", "alertmanager", "grafana"} <= set(s)
    assert s["vllm"]["image"].startswith("vllm/vllm-openai:")
    assert s["vllm"]["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"] == ["gpu"]
    assert s["vllm-cpu"]["profiles"] == ["cpu"]
    for v in ("vllm", "vllm-cpu"):
        # vLLM itself writes the file: vLLM's logging configuration, the same as Kubernetes', no wrapper
        assert s[v]["entrypoint"] == ["vllm", "serve"]
        assert s[v]["environment"]["VLLM_LOGGING_CONFIG_PATH"] == "/etc/vllm-logging/logging.json"
        assert (
            "../deploy/kubernetes/components/vllm-logging/logging.json:/etc/vllm-logging/logging.json:ro"
            in s[v]["volumes"]
        )
        assert "vllm-logs:/var/log/vllm" in s[v]["volumes"]
        assert not [vol for vol in s[v]["volumes"] if "tee.py" in vol]
        assert s[v]["networks"]["default"]["aliases"] == ["vllm"]
    side = s["observe"]
    assert side["build"] == {"context": "..", "dockerfile": "compose/Dockerfile.sidecar"}
    assert side["command"] == [
        "sidecar",
        "--log",
        "/logs/vllm.log",
        "--vllm-url",
        "http://vllm:8000",
        "--listen",
        "0.0.0.0:9400",
    ]
    assert "vllm-logs:/logs:ro" in side["volumes"]
    assert "../alerts:/etc/prometheus/rules:ro" in s["prometheus"]["volumes"]
    assert "../dashboards:/var/lib/grafana/dashboards/observe:ro" in s["grafana"]["volumes"]
    assert s["grafana"]["environment"]["GF_SECURITY_ADMIN_PASSWORD"].startswith("${GF_ADMIN_PASSWORD:?")
    for name, svc in s.items():
        for port in svc.get("ports", []):
            assert port.startswith("127.0.0.1:"), f"{name} publishes {port} beyond localhost"
    assert (COMPOSE / "Dockerfile.sidecar").is_file()
    assert (COMPOSE / ".env").read_text().count("COMPOSE_PROFILES=gpu") == 1


def test_dockerfile_installs_the_package_and_runs_observe():
    text = (COMPOSE / "Dockerfile.sidecar").read_text()
    assert re.search(r"^FROM python:3\.1[1-9]", text, re.M)
    assert "COPY observe ./observe" in text and re.search(r"pip install [^\n]*\s\.(\s|$)", text, re.M)
    assert 'ENTRYPOINT ["observe"]' in text
    assert re.search(r"^USER \d+", text, re.M), "run as a non-root user"


def test_the_file_vllm_writes_is_the_one_the_sidecar_follows():
    """The logging configuration's file handler writes into the volume the sidecar reads, under the
    name it follows; the configuration is the generator's (tests/test_k8s_logging_config.py)."""
    s = compose_doc()["services"]
    (mount,) = [v for v in s["vllm"]["volumes"] if v.endswith(":/etc/vllm-logging/logging.json:ro")]
    config = json.loads((COMPOSE / mount.split(":")[0]).read_text())
    (handler,) = [
        h for h in config["handlers"].values() if h["class"] == "logging.handlers.RotatingFileHandler"
    ]
    written = Path(handler["filename"])
    (vllm_vol,) = [v for v in s["vllm"]["volumes"] if v.startswith("vllm-logs:")]
    (side_vol,) = [v for v in s["observe"]["volumes"] if v.startswith("vllm-logs:")]
    assert Path(vllm_vol.split(":")[1]) == written.parent
    followed = Path(s["observe"]["command"][s["observe"]["command"].index("--log") + 1])
    assert Path(side_vol.split(":")[1]) == followed.parent and followed.name == written.name
    assert s["vllm-cpu"]["environment"]["VLLM_LOGGING_CONFIG_PATH"] == "/etc/vllm-logging/logging.json"


# ---------------------------------------------------------------- Prometheus config


@pytest.mark.skipif(not have("promtool"), reason="promtool not installed")
def test_prometheus_config_is_valid_with_the_rules(tmp_path: Path):
    cfg = yaml.safe_load((COMPOSE / "prometheus.yml").read_text())
    assert cfg["rule_files"] == ["/etc/prometheus/rules/*.yml"]
    jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
    assert jobs["vllm"]["static_configs"][0]["targets"] == ["vllm:8000"]
    # the sidecar's series carry the instance of the vLLM it watches (alerts join on instance)
    assert jobs["observe"]["static_configs"][0]["labels"]["instance"] == "vllm:8000"
    cfg["rule_files"] = [str(ROOT / "alerts" / "*.yml")]
    f = tmp_path / "prometheus.yml"
    f.write_text(yaml.safe_dump(cfg))
    r = subprocess.run(["promtool", "check", "config", str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout and "rules found" in r.stdout


# ---------------------------------------------------------------- Alertmanager config


@pytest.mark.skipif(not have("amtool"), reason="amtool not installed")
@pytest.mark.parametrize(
    "env",
    [
        {},
        {
            "SLACK_API_URL": "https://hooks.slack.example/T/B/x",
            "SLACK_SEVERITIES": "critical",
            "SMTP_SMARTHOST": "smtp.example:587",
            "ALERT_EMAIL_TO": "oncall@example.org",
            "EMAIL_SEVERITIES": "critical|warning",
        },
    ],
)
def test_rendered_alertmanager_config_is_valid(tmp_path: Path, env: dict):
    out = render_alertmanager(tmp_path, **env)
    r = subprocess.run(["amtool", "check-config", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "${" not in out.read_text().split("receivers:")[1], "a placeholder was left unrendered"


def test_render_uses_environment_and_escapes_it(tmp_path: Path):
    out = render_alertmanager(
        tmp_path, ALERT_WEBHOOK_URL='http://hook.example/a"b\\c', SLACK_SEVERITIES="critical"
    )
    doc = yaml.safe_load(out.read_text())
    assert doc["receivers"][0]["webhook_configs"][0]["url"] == 'http://hook.example/a"b\\c'
    assert doc["route"]["routes"][0]["matchers"] == ['severity=~"critical"']
    default = yaml.safe_load(render_alertmanager(tmp_path).read_text())
    assert default["receivers"][0]["webhook_configs"][0]["url"] == "http://alert-log:8080/"
    assert default["route"]["group_by"] == ["alertname", "instance", "model_name"]


def _routes(config: Path, *labels: str) -> str:
    r = subprocess.run(
        ["amtool", "config", "routes", "test", f"--config.file={config}", *labels],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.mark.skipif(not have("amtool"), reason="amtool not installed")
def test_routing_by_severity(tmp_path: Path):
    default = render_alertmanager(tmp_path)
    assert _routes(default, "severity=critical", "alertname=VLLMDown") == "webhook"
    assert _routes(default, "severity=info") == "webhook"
    both = render_alertmanager(tmp_path, SLACK_SEVERITIES="critical|warning", EMAIL_SEVERITIES="critical")
    assert _routes(both, "severity=critical") == "slack,email,webhook"
    assert _routes(both, "severity=warning") == "slack,webhook"
    assert _routes(both, "severity=info") == "webhook"


@pytest.mark.skipif(not have("prometheus-alertmanager"), reason="prometheus-alertmanager not installed")
def test_vllm_down_inhibits_its_metric_alerts_but_not_log_alerts(tmp_path: Path):
    cfg = render_alertmanager(tmp_path, ALERT_WEBHOOK_URL=f"http://127.0.0.1:{free_port()}/").read_text()

    def alert(name: str, component: str, instance: str, severity: str = "warning") -> dict:
        # no startsAt: Alertmanager stamps the receipt (an older one flushes at once, racing inhibition)
        return {
            "labels": {"alertname": name, "component": component, "instance": instance, "severity": severity}
        }

    with alertmanager(cfg, tmp=tmp_path) as am:
        posted = [
            alert("VLLMDown", "vllm", "a:8000", "critical"),
            alert("VLLMKVCacheSaturated", "vllm", "a:8000"),
            alert("VLLMEngineOOM", "vllm-logs", "a:8000", "critical"),
            alert("VLLMKVCacheSaturated", "vllm", "b:8000"),
        ]
        requests.post(am + "/api/v2/alerts", json=posted, timeout=5).raise_for_status()

        def states():
            got = requests.get(am + "/api/v2/alerts", timeout=5).json()
            return {(a["labels"]["alertname"], a["labels"]["instance"]): a["status"] for a in got}

        s = wait_until(
            lambda: (
                (st := states())
                and len(st) == 4
                and st[("VLLMKVCacheSaturated", "a:8000")]["inhibitedBy"]
                and st
            ),
            20,
            what="inhibition",
        )
        assert s[("VLLMKVCacheSaturated", "a:8000")]["state"] == "suppressed"
        assert s[("VLLMKVCacheSaturated", "b:8000")]["inhibitedBy"] == []  # another instance
        assert s[("VLLMEngineOOM", "a:8000")]["inhibitedBy"] == []  # log alerts say why it is down
        assert s[("VLLMDown", "a:8000")]["inhibitedBy"] == []


def test_webhook_log_prints_one_escaped_line_per_alert():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(COMPOSE / "webhook_log.py"), "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        payload = {
            "alerts": [
                {
                    "status": "firing",
                    "labels": {"alertname": "VLLMDown", "instance": "a\x1b[31m"},
                    "annotations": {"summary": "vLLM a is down"},
                }
            ]
        }
        wait_until(
            lambda: requests.post(f"http://127.0.0.1:{port}/", json=payload, timeout=2).ok,
            15,
            what="webhook_log up",
        )
        line = proc.stdout.readline()
        assert "\x1b" not in line and "\\u001b" in line
        assert json.loads(line)["labels"]["alertname"] == "VLLMDown"
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def _dur_s(d: str) -> int:
    return sum(int(n) * {"s": 1, "m": 60, "h": 3600}[u] for n, u in re.findall(r"(\d+)([smh])", d))


def test_alertmanager_timings_page_and_resolve_within_a_minute(tmp_path: Path):
    """Critical pages go out within seconds and their resolutions within a minute; groups are per
    alert name, so a short outage is not held back by another alert's group on the instance."""
    doc = yaml.safe_load(render_alertmanager(tmp_path).read_text())
    route = doc["route"]
    assert route["group_by"][0] == "alertname"
    crit = next(r for r in route["routes"] if r.get("matchers") == ['severity="critical"'])
    assert _dur_s(crit["group_wait"]) <= 10 and _dur_s(crit["group_interval"]) <= 30
    warn = next(r for r in route["routes"] if r.get("matchers") == ['severity="warning"'])
    assert _dur_s(warn["group_wait"]) + _dur_s(warn["group_interval"]) <= 90
    for r in route["routes"]:  # slack and e-mail inherit the top level's; info is a ticket
        if r.get("matchers") != ['severity="info"']:
            assert _dur_s(r.get("group_interval", route["group_interval"])) <= 60
