"""The PodMonitors of deploy/kubernetes/platforms/ select the vLLM pods of the platforms people deploy
(vLLM's own Helm chart, production-stack, llm-d incl. its multi-node LeaderWorkerSet, KServe), judged
against the workloads their charts and controllers render (tests/data/platforms/, provenance in
tests/data/PROVENANCE.md): each monitor's selector matches its platform's pod labels and no other
platform's, its endpoint names a port the vLLM container has, and it looks in every namespace."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
import yaml

from observe.settings import Settings
from tests.k8skit import crd_schema

ROOT = Path(__file__).resolve().parents[1]
MONITORS = ROOT / "deploy" / "kubernetes" / "platforms"
SAMPLES = ROOT / "tests" / "data" / "platforms"
PLATFORMS = ("vllm-helm", "production-stack", "llm-d", "kserve")


def selects(selector: dict, labels: dict[str, str]) -> bool:
    """A Kubernetes LabelSelector (matchLabels, matchExpressions) against a pod's labels."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for e in selector.get("matchExpressions", []):
        key, op, values = e["key"], e["operator"], e.get("values", [])
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not ok:
            return False
    return True


def pod_templates(path: Path) -> list[dict]:
    """The pod templates of a sample's workloads (a LeaderWorkerSet's workerTemplate included)."""
    out = []
    for doc in yaml.safe_load_all(path.read_text()):
        spec = doc.get("spec", {})
        if doc["kind"] == "LeaderWorkerSet":
            lwt = spec["leaderWorkerTemplate"]
            out += [lwt["workerTemplate"]] + ([lwt["leaderTemplate"]] if "leaderTemplate" in lwt else [])
        elif "template" in spec:
            out.append(spec["template"])
    return out


def monitor(name: str) -> dict:
    return yaml.safe_load((MONITORS / f"{name}.yaml").read_text())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_monitor_selects_its_platform_and_no_other(platform: str) -> None:
    pm = monitor(platform)
    jsonschema.validate(pm, crd_schema("PodMonitor"))
    assert pm["spec"]["namespaceSelector"] == {"any": True}
    assert dict(Settings().rule_labels).items() <= pm["metadata"]["labels"].items()
    for other in PLATFORMS:
        templates = pod_templates(SAMPLES / f"{other}.yaml")
        assert templates, other
        for t in templates:
            assert selects(pm["spec"]["selector"], t["metadata"]["labels"]) is (other == platform), (
                platform,
                other,
            )


def _runtime_port(path: Path) -> int | None:
    for doc in yaml.safe_load_all(path.read_text()):
        if doc["kind"] == "ClusterServingRuntime":
            return int(doc["spec"]["annotations"]["prometheus.kserve.io/port"])
    return None


@pytest.mark.parametrize("platform", PLATFORMS)
def test_monitor_scrapes_a_port_the_vllm_container_has(platform: str) -> None:
    (ep,) = monitor(platform)["spec"]["podMetricsEndpoints"]
    for t in pod_templates(SAMPLES / f"{platform}.yaml"):
        ports = [p for c in t["spec"]["containers"] for p in c.get("ports", [])]
        if "port" in ep:
            assert ep["port"] in {p.get("name") for p in ports}, (platform, ports)
        else:  # KServe's runtime names no port: the number its scrape annotation gives
            assert ep["targetPort"] in {p["containerPort"] for p in ports}
            assert ep["targetPort"] == _runtime_port(SAMPLES / f"{platform}.yaml")
    relabel = {r["targetLabel"]: r for r in ep["relabelings"]}
    assert relabel["instance"]["sourceLabels"] == [
        "__meta_kubernetes_namespace",
        "__meta_kubernetes_pod_name",
    ]
    assert relabel["job"]["replacement"] == Settings().vllm_job


def test_llm_d_multinode_pods_keep_their_group_and_worker() -> None:
    """A LeaderWorkerSet replica's pods share the workerTemplate's labels; the LWS controller's
    group and worker index labels keep them apart (and show which pod is the leader, worker 0)."""
    (ep,) = monitor("llm-d")["spec"]["podMetricsEndpoints"]
    sources = {r["targetLabel"]: r.get("sourceLabels") for r in ep["relabelings"]}
    assert sources["lws_group"] == ["__meta_kubernetes_pod_label_leaderworkerset_sigs_k8s_io_group_index"]
    assert sources["lws_worker"] == ["__meta_kubernetes_pod_label_leaderworkerset_sigs_k8s_io_worker_index"]
    kinds = [d["kind"] for d in yaml.safe_load_all((SAMPLES / "llm-d.yaml").read_text())]
    assert kinds == ["LeaderWorkerSet", "Deployment"]


def test_every_podmonitor_that_selects_other_namespaces_says_so() -> None:
    """The node DaemonSet's PodMonitors select vLLM pods (and its own) wherever they run."""
    node = ROOT / "deploy" / "kubernetes" / "components" / "node-daemonset" / "podmonitor.yaml"
    for path in [node, *MONITORS.glob("*.yaml")]:
        for pm in yaml.safe_load_all(path.read_text()):
            assert pm["spec"].get("namespaceSelector") == {"any": True}, (path, pm["metadata"]["name"])
