"""What the Kubernetes tests share (no test module imports another): the Kubernetes version the
manifests are validated for, the Prometheus Operator CRD schemas made strict, and a Deployment
shaped like production-stack's chart output."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import yaml

SCHEMAS = Path(__file__).resolve().parents[1] / "deploy" / "schemas"
K8S_VERSION = "1.30.0"  # native sidecars (initContainers with restartPolicy: Always) are on from 1.29
CRD_FILES = {
    "PodMonitor": "podmonitor.crd.yaml",
    "PrometheusRule": "monitoring.coreos.com_prometheusrules.yaml",
}


def _strict(schema: dict) -> dict:
    """additionalProperties: false wherever a schema lists its properties (and keeps no unknown
    fields), as the API server's strict field validation treats them; Go regex flags moved for
    Python."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if (
                "properties" in node
                and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")
            ):
                node["additionalProperties"] = False
            pattern = node.get("pattern")
            if isinstance(pattern, str) and "(?i)" in pattern[1:]:
                # RE2 (Go) takes inline flags anywhere; Python's re only at the start
                node["pattern"] = "(?i)" + pattern.replace("(?i)", "")
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    # metadata is validated by the API server against ObjectMeta, not by the CRD schema
    schema["properties"]["metadata"] = {"type": "object"}
    return schema


@functools.cache
def crd_schema(kind: str) -> dict:
    crd = yaml.safe_load((SCHEMAS / CRD_FILES[kind]).read_text())
    assert crd["spec"]["names"]["kind"] == kind
    if "versions" in crd["spec"] and any("schema" in v for v in crd["spec"]["versions"]):
        (v1,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
        schema = v1["schema"]["openAPIV3Schema"]
    else:
        schema = crd["spec"]["validation"]["openAPIV3Schema"]
    return _strict(schema)


# A Deployment shaped like production-stack's helm/templates/deployment-vllm-multi.yaml renders it
# (name <release>-<model>-deployment-vllm, container "vllm" whose command is `vllm serve MODEL …`),
# with the values snippet's extraVolumes / extraVolumeMounts.
CHART_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "vllm-llm-deployment-vllm", "labels": {"model": "llm", "helm-release-name": "vllm"}},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"model": "llm", "helm-release-name": "vllm"}},
        "template": {
            "metadata": {"labels": {"model": "llm", "helm-release-name": "vllm"}},
            "spec": {
                "containers": [
                    {
                        "name": "vllm",
                        "image": "vllm/vllm-openai:v0.11.0",
                        "command": [
                            "vllm",
                            "serve",
                            "Qwen/Qwen2.5-1.5B-Instruct",
                            "--host",
                            "0.0.0.0",
                            "--port",
                            "8000",
                        ],
                    }
                ]
            },
        },
    },
}


# ---------------------------------------------------------------- Pod Security Standards
# The checks of https://kubernetes.io/docs/concepts/security/pod-security-standards/ that a pod
# template can fail (policy version 1.30): baseline's, then restricted's on top.
BASELINE_CAPS = {
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
}
RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


def _containers(spec: dict) -> list[dict]:
    return [
        *spec.get("initContainers", []),
        *spec.get("containers", []),
        *spec.get("ephemeralContainers", []),
    ]


def baseline_violations(spec: dict) -> list[str]:
    """What keeps a pod spec out of `baseline` (each a sentence naming the container or volume)."""
    out = [f"host namespace {k}" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k)]
    out += [f"hostPath volume {v['name']}" for v in spec.get("volumes", []) if "hostPath" in v]
    pod_sc = spec.get("securityContext") or {}
    if (pod_sc.get("seccompProfile") or {}).get("type") == "Unconfined":
        out.append("pod seccomp Unconfined")
    for c in _containers(spec):
        sc = c.get("securityContext") or {}
        if sc.get("privileged"):
            out.append(f"{c['name']}: privileged")
        extra = set((sc.get("capabilities") or {}).get("add", [])) - BASELINE_CAPS
        if extra:
            out.append(f"{c['name']}: adds {sorted(extra)}")
        if any(p.get("hostPort") for p in c.get("ports", [])):
            out.append(f"{c['name']}: hostPort")
        if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
            out.append(f"{c['name']}: seccomp Unconfined")
        if sc.get("procMount", "Default") != "Default":
            out.append(f"{c['name']}: procMount")
    return out


def restricted_violations(spec: dict, only: set[str] | None = None) -> list[str]:
    """What keeps a pod spec (or, with `only`, those of its containers) out of `restricted`, beyond
    baseline's checks."""
    pod_sc = spec.get("securityContext") or {}
    out = (
        []
        if only
        else [
            f"volume {v['name']}"
            for v in spec.get("volumes", [])
            if not set(v) - {"name"} <= RESTRICTED_VOLUMES
        ]
    )
    for c in _containers(spec):
        if only is not None and c["name"] not in only:
            continue
        sc = c.get("securityContext") or {}
        name = c["name"]
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(f"{name}: allowPrivilegeEscalation not false")
        if not sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")):
            out.append(f"{name}: runAsNonRoot not true")
        if sc.get("runAsUser", pod_sc.get("runAsUser")) == 0:
            out.append(f"{name}: runAsUser 0")
        seccomp = (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            out.append(f"{name}: seccompProfile {seccomp}")
        caps = sc.get("capabilities") or {}
        if "ALL" not in caps.get("drop", []):
            out.append(f"{name}: capabilities not dropping ALL")
        if set(caps.get("add", [])) - {"NET_BIND_SERVICE"}:
            out.append(f"{name}: adds {caps['add']}")
    return out


def pod_security_level(spec: dict) -> str:
    """The most restrictive Pod Security level a pod spec meets."""
    if baseline_violations(spec):
        return "privileged"
    return "baseline" if restricted_violations(spec) else "restricted"
