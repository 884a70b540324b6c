"""Cluster hygiene (issue 30 item 5), on the rendered manifests: the Pod Security level each workload
meets is the one docs/kubernetes.md states (tests/k8skit.py's checks of the Pod Security Standards);
a NetworkPolicy lets only Prometheus reach the sidecar's port and leaves vLLM's port as it was; who
can read /api/diagnosis, as docs/kubernetes.md says it, is what the exporter does with the args the
manifests give the sidecar."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import requests
import yaml

from observe.sidecar import exporter
from observe.sidecar.config import SidecarSettings
from tests.k8skit import baseline_violations, pod_security_level, restricted_violations
from tests.services import have

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "kubernetes"
DOC = (ROOT / "docs" / "kubernetes.md").read_text()
OVERLAYS = sorted(p.name for p in (K8S / "overlays").iterdir() if (p / "kustomization.yaml").is_file())

pytestmark = pytest.mark.skipif(not have("kubectl"), reason="kubectl not installed")


def kustomize(path: Path) -> list[dict]:
    r = subprocess.run(["kubectl", "kustomize", str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def node_daemonset(tmp_path: Path) -> list[dict]:
    shutil.copytree(K8S / "components" / "node-daemonset", tmp_path / "components" / "node-daemonset")
    shutil.copytree(K8S / "image", tmp_path / "image")
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump({"namespace": "llm", "components": ["components/node-daemonset"]})
    )
    return kustomize(tmp_path)


def workload(docs: list[dict], kind: str, name: str) -> dict:
    (d,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return d


def documented_levels() -> dict[str, str]:
    """docs/kubernetes.md's Pod Security table: first cell → level."""
    section = DOC[DOC.index("## Pod Security") :]
    rows = re.findall(r"^\| (.+?) \| `(privileged|baseline|restricted)` \|", section, re.M)
    assert rows
    return dict(rows)


def level_of(key: str) -> str:
    [level] = [lv for row, lv in documented_levels().items() if row.startswith(key)]
    return level


def observe_only(spec: dict) -> dict:
    """The pod spec reduced to observe's init containers and the volumes they mount."""
    inits = spec["initContainers"]
    mounted = {m["name"] for c in inits for m in c.get("volumeMounts", [])}
    return {"initContainers": inits, "volumes": [v for v in spec["volumes"] if v["name"] in mounted]}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_observes_containers_are_restricted_and_vllms_pod_keeps_its_own_level(overlay: str):
    spec = workload(kustomize(K8S / "overlays" / overlay), "Deployment", "vllm")["spec"]["template"]["spec"]
    names = {c["name"] for c in spec["initContainers"]}
    assert "observe" in names
    assert pod_security_level(observe_only(spec)) == level_of("`observe` containers") == "restricted"
    assert restricted_violations(spec, only=names) == []
    # the pod as a whole: vLLM's container as vLLM's image runs it (root) decides
    assert pod_security_level(spec) == level_of("vLLM's pod") == "baseline"
    (vllm,) = spec["containers"]
    assert restricted_violations({"containers": [vllm]})  # vLLM's, not observe's


def test_the_node_daemonset_and_dcgm_exporter_are_privileged_as_documented(tmp_path: Path):
    ds = workload(node_daemonset(tmp_path), "DaemonSet", "observe-node")["spec"]["template"]["spec"]
    assert pod_security_level(ds) == level_of("`components/node-daemonset`") == "privileged"
    assert sorted(baseline_violations(ds)) == [
        "hostPath volume pod-logs",
        "observe: adds ['DAC_READ_SEARCH']",
    ]
    gpu = kustomize(K8S / "overlays" / "gpu")
    dcgm = workload(gpu, "DaemonSet", "dcgm-exporter")["spec"]["template"]["spec"]
    assert pod_security_level(dcgm) == level_of("`components/dcgm-exporter`") == "privileged"


def test_the_checks_can_fail():
    spec = workload(kustomize(K8S / "overlays" / "cpu"), "Deployment", "vllm")["spec"]["template"]["spec"]
    loose = copy.deepcopy(observe_only(spec))
    del loose["initContainers"][0]["securityContext"]["allowPrivilegeEscalation"]
    assert pod_security_level(loose) == "baseline"
    loose["initContainers"][0]["securityContext"]["privileged"] = True
    assert pod_security_level(loose) == "privileged"
    hostpath = copy.deepcopy(observe_only(spec))
    hostpath["volumes"].append({"name": "h", "hostPath": {"path": "/"}})
    assert pod_security_level(hostpath) == "privileged"


# ---------------------------------------------------------------- NetworkPolicy


def _ports(rule: dict) -> set[str]:
    return {p["port"] for p in rule.get("ports", [])}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_only_prometheus_reaches_the_sidecars_port_and_vllms_port_stays_open(overlay: str):
    docs = kustomize(K8S / "overlays" / overlay)
    (np,) = [d for d in docs if d["kind"] == "NetworkPolicy"]
    pod = workload(docs, "Deployment", "vllm")["spec"]["template"]
    assert np["spec"]["podSelector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert np["spec"]["policyTypes"] == ["Ingress"]
    side = {c["name"]: c for c in pod["spec"]["initContainers"]}["observe"]
    (vllm,) = pod["spec"]["containers"]
    rules = {frozenset(_ports(r)): r for r in np["spec"]["ingress"]}
    observe_port = {p["name"] for p in side["ports"]}
    vllm_port = {p["name"] for p in vllm["ports"]}
    assert set(rules) == {frozenset(observe_port), frozenset(vllm_port)}
    (peer,) = rules[frozenset(observe_port)]["from"]
    assert peer["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "monitoring"}
    assert peer["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "prometheus"}
    assert "from" not in rules[frozenset(vllm_port)]  # vLLM's port: as open as without the policy


def test_the_node_daemonsets_port_is_prometheus_only(tmp_path: Path):
    docs = node_daemonset(tmp_path)
    (np,) = [d for d in docs if d["kind"] == "NetworkPolicy"]
    pod = workload(docs, "DaemonSet", "observe-node")["spec"]["template"]
    assert np["spec"]["podSelector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    (rule,) = np["spec"]["ingress"]
    assert _ports(rule) == {p["name"] for c in pod["spec"]["containers"] for p in c["ports"]}
    (peer,) = rule["from"]
    assert set(peer) == {"namespaceSelector", "podSelector"}


# ---------------------------------------------------------------- who reads /api/diagnosis


def _arg(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_api_diagnosis_as_shipped_answers_403_to_everyone_as_documented(overlay: str):
    """The docs' one statement; the sidecar made from the manifest's own args answers it so, from
    loopback too (a listener on 0.0.0.0 cannot tell Prometheus from anyone)."""
    assert "As shipped, `/api/diagnosis` answers **403** to everyone" in DOC
    spec = workload(kustomize(K8S / "overlays" / overlay), "Deployment", "vllm")["spec"]["template"]["spec"]
    args = {c["name"]: c for c in spec["initContainers"]}["observe"]["args"]
    assert "--api-token-file" not in args and "--api-diagnosis" not in args
    settings = SidecarSettings.from_cli(
        logs=[], vllm_url=_arg(args, "--vllm-url"), listen=_arg(args, "--listen")
    )
    assert settings.diagnosis_access == "closed"
    reg = exporter.make_registry(exporter.ExportState)
    srv = exporter.Server(
        reg, port=0, diagnosis=lambda: {"schema": "x"}, diagnosis_access=settings.diagnosis_access
    )
    srv.start()
    try:
        assert requests.get(srv.url + "/api/diagnosis", timeout=5).status_code == 403
        for open_path in ("/metrics", "/healthz", "/readyz/vllm"):
            assert requests.get(srv.url + open_path, timeout=5).status_code == 200, open_path
    finally:
        srv.stop()
    # with a token (the documented way to open it): the bearer only
    tok = SidecarSettings.from_cli(
        logs=[], vllm_url=_arg(args, "--vllm-url"), listen=_arg(args, "--listen"), api_token="s3cret"
    )
    srv = exporter.Server(
        reg, port=0, diagnosis=lambda: {"schema": "x"}, diagnosis_access=tok.diagnosis_access, token="s3cret"
    )
    srv.start()
    try:
        assert requests.get(srv.url + "/api/diagnosis", timeout=5).status_code == 401
        ok = requests.get(srv.url + "/api/diagnosis", headers={"Authorization": "Bearer s3cret"}, timeout=5)
        assert ok.status_code == 200
    finally:
        srv.stop()
