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
