"""deploy/kubernetes/: the generated manifests are the generator's output; every overlay renders with
`kubectl kustomize` and validates against the Kubernetes schemas (kubernetes-validate, offline) and
the Prometheus Operator's CRD schemas (deploy/schemas/, jsonschema); the pod's wiring (one writer of
the log, a native sidecar, readiness, non-root) and the PodMonitor's join labels hold."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml

from observe.monitoring import alerts, dashboards, kubernetes
from observe.settings import Settings
from tests.k8skit import CHART_DEPLOYMENT, CRD_FILES, K8S_VERSION, SCHEMAS, crd_schema
from tests.services import have

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "kubernetes"
GENERATED = K8S / "base" / "generated"
OVERLAYS = sorted(p.name for p in (K8S / "overlays").iterdir() if (p / "kustomization.yaml").is_file())

needs_kubectl = pytest.mark.skipif(not have("kubectl"), reason="kubectl not installed")


@functools.cache
def render(overlay: str) -> tuple[dict, ...]:
    r = subprocess.run(
        ["kubectl", "kustomize", str(K8S / "overlays" / overlay)], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    return tuple(d for d in yaml.safe_load_all(r.stdout) if d)


def one(docs: tuple[dict, ...], kind: str, name: str | None = None) -> dict:
    found = [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, (kind, name, [d["metadata"]["name"] for d in found])
    return found[0]


def pod_spec(docs: tuple[dict, ...]) -> dict:
    return one(docs, "Deployment", "vllm")["spec"]["template"]["spec"]


# ---------------------------------------------------------------- generated files


def test_generated_manifests_do_not_drift():
    for name, text in kubernetes.manifests().items():
        assert (GENERATED / name).read_text(encoding="utf-8") == text, (
            f"deploy/kubernetes/base/generated/{name} drifted: observe generate kubernetes"
        )
    assert sorted(p.name for p in GENERATED.iterdir()) == sorted(kubernetes.manifests())


def test_prometheusrule_is_the_rule_group_with_the_settings_labels():
    doc = yaml.safe_load((GENERATED / "prometheusrule.yaml").read_text())
    s = Settings()
    assert doc["kind"] == "PrometheusRule"
    assert doc["spec"]["groups"] == [alerts.rule_group(s)]
    assert dict(s.rule_labels).items() <= doc["metadata"]["labels"].items()


def test_prometheusrule_follows_other_settings(tmp_path: Path):
    s = Settings().replace(rule_labels={"release": "prom"}, vllm_selector='namespace="llm",container="vllm"')
    kubernetes.write_manifests(tmp_path, s)
    doc = yaml.safe_load((tmp_path / "prometheusrule.yaml").read_text())
    assert doc["metadata"]["labels"]["release"] == "prom"
    exprs = [r["expr"] for r in doc["spec"]["groups"][0]["rules"]]
    assert any('namespace="llm",container="vllm"' in e for e in exprs)


def test_dashboard_configmaps_are_the_dashboards_labelled_for_grafanas_sidecar():
    maps = list(yaml.safe_load_all((GENERATED / "grafana-dashboards.yaml").read_text()))
    rendered = dashboards.render()
    assert len(maps) == len(rendered)
    for cm in maps:
        assert cm["kind"] == "ConfigMap"
        assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
        ((fname, text),) = cm["data"].items()
        assert rendered[fname] == text
        assert len(text.encode()) < 256 * 1024, "kubectl apply's last-applied annotation limit"


# ---------------------------------------------------------------- rendering and schemas


@needs_kubectl
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_renders_everything(overlay: str):
    docs = render(overlay)
    kinds = sorted(d["kind"] for d in docs)
    logging_config = ["ConfigMap"] if overlay != "tee" else []  # components/vllm-logging's logging.json
    dcgm = ["DaemonSet", "PodMonitor"] if overlay == "gpu" else []  # components/dcgm-exporter
    assert kinds == sorted(
        ["Deployment", "Service", "PodMonitor", "PrometheusRule", "NetworkPolicy"]
        + ["ConfigMap"] * len(dashboards.DASHBOARDS)
        + logging_config
        + dcgm
    )
    assert all(d["metadata"].get("namespace") == "llm" for d in docs)


@needs_kubectl
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_builtin_kinds_validate_against_the_kubernetes_schemas(overlay: str):
    import kubernetes_validate

    for doc in render(overlay):
        if doc["kind"] in CRD_FILES:
            continue
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_kubernetes_validate_catches_a_wrong_field():
    """The check above can fail (and works offline: the schemas ship with the package)."""
    import kubernetes_validate

    bad = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "labelz": {"a": "b"}},
        "data": {"a": "b"},
    }
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, K8S_VERSION, strict=True)


def test_schemas_note_their_source():
    note = (SCHEMAS / "SOURCE.md").read_text()
    for fname in CRD_FILES.values():
        assert fname in note
    assert "prometheus-operator/prometheus-operator" in note


@needs_kubectl
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_crds_validate_against_the_prometheus_operator_schemas(overlay: str):
    docs = render(overlay)
    for kind in CRD_FILES:
        found = [d for d in docs if d["kind"] == kind]
        assert found
        for doc in found:
            jsonschema.validate(doc, crd_schema(kind))


def test_crd_schema_check_can_fail():
    pm = yaml.safe_load((K8S / "base" / "podmonitor.yaml").read_text())
    jsonschema.validate(pm, crd_schema("PodMonitor"))
    pm["spec"]["podMetricsEndpoints"][0]["relabelling"] = []  # a typo
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(pm, crd_schema("PodMonitor"))
    rule = yaml.safe_load((GENERATED / "prometheusrule.yaml").read_text())
    rule["spec"]["groups"][0]["rules"][-1]["for"] = "5 minutes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(rule, crd_schema("PrometheusRule"))


# ---------------------------------------------------------------- the pod's wiring


def _mount(container: dict, volume: str) -> dict:
    (m,) = [m for m in container.get("volumeMounts", []) if m["name"] == volume]
    return m


@needs_kubectl
def test_one_writer_of_the_log_on_a_shared_emptydir():
    """overlays/tee (components/tee); the others: tests/test_k8s_logging.py."""
    spec = pod_spec(render("tee"))
    init = {c["name"]: c for c in spec["initContainers"]}
    (vllm,) = spec["containers"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert "emptyDir" in volumes["logs"] and "emptyDir" in volumes["observe-bin"]
    # the install step copies tee.py where vLLM's command runs it
    install = init["install-tee"]
    assert "restartPolicy" not in install  # a plain init container: done before the others start
    src, dst = install["command"][-2:]
    assert dst.startswith(_mount(install, "observe-bin")["mountPath"] + "/")
    assert vllm["command"][:2] == ["python3", dst]
    assert _mount(vllm, "observe-bin")["readOnly"] is True
    # vLLM's main process is tee.py writing FILE and then `vllm serve`; no logging config per process
    cut = vllm["command"].index("--")
    assert vllm["command"][cut + 1 :] == ["vllm", "serve"]
    log_file = vllm["command"][cut - 1]
    assert not any("LOGGING_CONFIG" in e["name"] for e in vllm.get("env", []))
    logs_dir = _mount(vllm, "logs")["mountPath"]
    assert log_file.startswith(logs_dir + "/")
    # the sidecar follows that same file, read-only
    side = init["observe"]
    assert side["args"][side["args"].index("--log") + 1] == log_file
    assert _mount(side, "logs") == {"name": "logs", "mountPath": logs_dir, "readOnly": True}


@needs_kubectl
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_native_sidecar_ready_on_healthz_non_root(overlay: str):
    spec = pod_spec(render(overlay))
    side = {c["name"]: c for c in spec["initContainers"]}["observe"]
    assert side["restartPolicy"] == "Always"
    port = {p["name"]: p["containerPort"] for p in side["ports"]}["observe"]
    assert side["args"][side["args"].index("--listen") + 1] == f"0.0.0.0:{port}"
    assert side["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "observe"}
    assert side["args"][side["args"].index("--vllm-url") + 1] == "http://127.0.0.1:8000"
    for c in spec["initContainers"]:
        sc = c["securityContext"]
        assert (
            sc["runAsNonRoot"] is True
            and sc["runAsUser"] == 10001
            and sc["allowPrivilegeEscalation"] is False
        )
    (vllm,) = spec["containers"]
    assert vllm["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}


def test_sidecar_image_recipe_runs_as_a_numeric_non_root_user():
    text = (ROOT / "compose" / "Dockerfile.sidecar").read_text()
    users = [ln.split()[1] for ln in text.splitlines() if ln.startswith("USER ")]
    assert users and users[-1].split(":")[0] == "10001"
    assert "COPY observe ./observe" in text  # /app/observe/tee.py, which install-tee copies


@needs_kubectl
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_podmonitor_scrapes_both_ports_with_the_join_labels(overlay: str):
    docs = render(overlay)
    pm = one(docs, "PodMonitor", "observe-vllm")
    spec = pod_spec(docs)
    pod_labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert pm["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    ports = {p["name"] for c in spec["containers"] + spec["initContainers"] for p in c.get("ports", [])}
    endpoints = {e["port"]: e for e in pm["spec"]["podMetricsEndpoints"]}
    assert set(endpoints) == {"http", "observe"} and set(endpoints) <= ports
    s = Settings()

    def targets(ep: dict) -> dict[str, dict]:
        return {r["targetLabel"]: r for r in ep["relabelings"]}

    vllm_t, side_t = targets(endpoints["http"]), targets(endpoints["observe"])
    for label in ("namespace", "pod", "instance"):
        assert vllm_t[label] == side_t[label], f"{label} must be the same on both endpoints"
    assert vllm_t["namespace"]["sourceLabels"] == ["__meta_kubernetes_namespace"]
    assert vllm_t["pod"]["sourceLabels"] == ["__meta_kubernetes_pod_name"]
    assert vllm_t["job"]["replacement"] == s.vllm_job and side_t["job"]["replacement"] == s.observe_job
    assert dict(s.rule_labels).items() <= pm["metadata"]["labels"].items()


@needs_kubectl
def test_production_stack_post_renderer_applies_the_logging_component():
    """The post-renderer is components/vllm-logging over the chart's output: the chart's command and
    args stay as they are, the pod gets the same sidecar as overlays/cpu."""
    import kubernetes_validate

    ps = ROOT / "deploy" / "production-stack"
    r = subprocess.run(
        ["sh", str(ps / "post-renderer" / "kustomize.sh")],
        input=yaml.safe_dump(CHART_DEPLOYMENT),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    docs = [d for d in yaml.safe_load_all(r.stdout) if d]
    out = one(tuple(docs), "Deployment")
    kubernetes_validate.validate(out, K8S_VERSION, strict=True)
    got, base = out["spec"]["template"]["spec"], pod_spec(render("cpu"))
    (vllm,) = got["containers"]
    chart_vllm = CHART_DEPLOYMENT["spec"]["template"]["spec"]["containers"][0]
    assert vllm["command"] == chart_vllm["command"] and "args" not in vllm
    mine = {c["name"]: c for c in got["initContainers"]}["observe"]
    ref = {c["name"]: c for c in base["initContainers"]}["observe"]
    assert mine == ref
    assert out["spec"]["template"]["metadata"]["labels"]["observe.vllm/sidecar"] == "true"
    assert one(tuple(docs), "ConfigMap", "vllm-logging")["data"].keys() == {"logging.json"}
