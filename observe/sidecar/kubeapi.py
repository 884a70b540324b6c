"""Edge: the pods of this node that a label selector matches, from the Kubernetes API — for the
node-level sidecar (`observe sidecar --pod-selector 'app=vllm'`, the DaemonSet).

One request, ``GET /api/v1/pods?fieldSelector=spec.nodeName=<node>&labelSelector=<selector>``,
with the pod's service-account token (read from its file at every request: the kubelet rotates it)
over TLS checked against the service account's CA. The answer is a ``PodList``
(``{"kind": "PodList", "apiVersion": "v1", "metadata": {...}, "items": [Pod, ...]}``); of each pod
only names, the UID, the pod IP, container ports and the ``prometheus.io/*`` annotations are read,
as plain strings and numbers: nothing in an answer is run, loaded or followed. Each pod maps to

- its log folder, ``/var/log/pods/<namespace>_<name>_<uid>`` (``observe.sidecar.podlogs``), and
- its vLLM ``/metrics`` URL: ``http://<podIP>:<port><path>``, the port from ``--pod-metrics-port``,
  else the ``prometheus.io/port`` annotation, else the container's port named ``http``, else its
  first port; the path from ``prometheus.io/path``, else ``--pod-metrics-path``; none while the pod
  has no IP or says ``prometheus.io/scrape: "false"``.

Needs RBAC ``get/list/watch`` on ``pods`` (deploy/kubernetes/components/node-daemonset/rbac.yaml).
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests

from observe.errors import ConfigError

__all__ = ["ApiError", "Client", "Pod", "check_selector", "from_cli", "in_cluster_server", "pods_from"]

TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"
CA_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
_SELECTOR = re.compile(r"^[A-Za-z0-9_./!=,() -]+$")  # equality and set-based selector characters
_NAME = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$")


class ApiError(Exception):
    """The API could not be asked, or answered what observe cannot read (one sentence)."""


@dataclass(frozen=True)
class Pod:
    """What the node's sidecar needs of one pod."""

    namespace: str
    name: str
    uid: str
    phase: str
    metrics_url: str | None  # None: no IP yet, or the pod asks not to be scraped

    @property
    def key(self) -> str:
        """The sidecar's instance key, NAMESPACE/POD."""
        return f"{self.namespace}/{self.name}"

    @property
    def log_dir(self) -> str:
        """Its folder under /var/log/pods."""
        return f"{self.namespace}_{self.name}_{self.uid}"


def check_selector(selector: str) -> str:
    """A label selector as the API takes it (``app=vllm``, ``app in (vllm),tier!=x``); ValueError
    for anything else."""
    if not selector.strip() or not _SELECTOR.match(selector):
        raise ValueError(f"label selector {selector!r}: expected key=value[,key!=value,key in (a,b)...]")
    return selector.strip()


def in_cluster_server(env: Mapping[str, str]) -> str | None:
    """``https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`` (set in every pod), or None."""
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        return None
    return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"


def pods_from(
    doc: Any, *, container: str = "vllm", port: int | None = None, path: str = "/metrics"
) -> list[Pod]:
    """The pods of a PodList answer (ApiError when it is not one)."""
    if not isinstance(doc, dict) or doc.get("kind") != "PodList" or not isinstance(doc.get("items"), list):
        raise ApiError("the API's answer is not a PodList")
    out = []
    for item in doc["items"]:
        meta = _dict(item, "metadata")
        spec, status = _dict(item, "spec"), _dict(item, "status")
        ns, name, uid = (_str(meta, k) for k in ("namespace", "name", "uid"))
        if not (
            ns and name and uid and _NAME.match(ns) and _NAME.match(name) and re.match(r"^[0-9a-f-]+$", uid)
        ):
            continue  # not a pod observe could follow (its log folder name would not parse)
        ann = {k: v for k, v in _dict(meta, "annotations").items() if isinstance(v, str)}
        out.append(
            Pod(ns, name, uid, _str(status, "phase"), _metrics_url(status, spec, ann, container, port, path))
        )
    return out


class Client:
    """Lists this node's pods that match a label selector."""

    def __init__(
        self,
        server: str,
        *,
        node: str,
        selector: str,
        token_file: str = TOKEN_FILE,
        ca_file: str | None = CA_FILE,
        container: str = "vllm",
        metrics_port: int | None = None,
        metrics_path: str = "/metrics",
        timeout: float = 10.0,
    ) -> None:
        self.selector = check_selector(selector)
        if not node:
            raise ValueError(
                "the node's name is unknown: set NODE_NAME from the downward API (spec.nodeName)"
            )
        self.server = server.rstrip("/")
        self.node = node
        self.token_file, self.ca_file = token_file, ca_file
        self.container, self.metrics_port, self.metrics_path = container, metrics_port, metrics_path
        self.timeout = timeout
        self._session = requests.Session()
        self._session.trust_env = False  # no proxy from the environment between observe and its API

    def pods(self) -> list[Pod]:
        """The node's matching pods now (ApiError with one sentence when that cannot be known)."""
        try:
            with open(self.token_file, encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as e:
            raise ApiError(
                f"cannot read the service-account token {self.token_file}: {e.strerror or e}"
            ) from None
        try:
            r = self._session.get(
                self.server + "/api/v1/pods",
                params={"fieldSelector": f"spec.nodeName={self.node}", "labelSelector": self.selector},
                headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
                verify=self.ca_file if self.ca_file else True,
                timeout=self.timeout,
                allow_redirects=False,
            )
        except requests.RequestException as e:
            raise ApiError(f"cannot list pods at {self.server}: {type(e).__name__}") from None
        except OSError as e:  # requests: the CA file is missing
            raise ApiError(f"cannot list pods at {self.server}: the CA file {self.ca_file}: {e}") from None
        if r.status_code != 200:
            hint = " (RBAC: the ServiceAccount needs list on pods)" if r.status_code == 403 else ""
            raise ApiError(f"listing pods at {self.server} answered HTTP {r.status_code}{hint}")
        try:
            doc = r.json()
        except ValueError:
            raise ApiError(f"listing pods at {self.server} did not answer JSON") from None
        return pods_from(doc, container=self.container, port=self.metrics_port, path=self.metrics_path)

    def close(self) -> None:
        self._session.close()


def _dict(d: Any, key: str) -> dict:
    v = d.get(key) if isinstance(d, dict) else None
    return v if isinstance(v, dict) else {}


def _str(d: dict, key: str) -> str:
    v = d.get(key)
    return v if isinstance(v, str) else ""


def _metrics_url(
    status: dict, spec: dict, ann: dict[str, str], container: str, port: int | None, path: str
) -> str | None:
    if ann.get("prometheus.io/scrape", "").lower() == "false":
        return None
    try:
        ip = ipaddress.ip_address(_str(status, "podIP"))
    except ValueError:
        return None  # no IP yet (Pending), or not an address
    if port is None:
        port = _port(ann.get("prometheus.io/port"))
    if port is None:
        ports = [
            p
            for c in spec.get("containers") or []
            if isinstance(c, dict) and c.get("name") == container
            for p in c.get("ports") or []
            if isinstance(p, dict)
        ]
        named = [p for p in ports if p.get("name") == "http"] or ports
        port = _port(named[0].get("containerPort")) if named else None
    if port is None:
        return None
    p = ann.get("prometheus.io/path") or path
    if not p.startswith("/") or not re.match(r"^[A-Za-z0-9/._~-]+$", p):
        p = path
    scheme = "https" if ann.get("prometheus.io/scheme", "").lower() == "https" else "http"
    host = f"[{ip}]" if ip.version == 6 else str(ip)
    return f"{scheme}://{host}:{port}{p}"


def _port(v: Any) -> int | None:
    try:
        n = int(v)
    except (TypeError, ValueError):
        return None
    return n if 0 < n < 65536 else None


def env_node(env: Mapping[str, str] = os.environ) -> str:
    """The node's name from the downward API's NODE_NAME ("" when unset)."""
    return env.get("NODE_NAME", "")


def from_cli(
    selector: str | None,
    *,
    env: Mapping[str, str],
    server: str | None = None,
    token_file: str | None = None,
    ca_file: str | None = None,
    container: str = "vllm",
    metrics_port: int | None = None,
    metrics_path: str = "/metrics",
) -> Client | None:
    """The `observe sidecar --pod-selector` client (None without a selector); ConfigError, one
    sentence, for what cannot work: no API address outside a cluster, no NODE_NAME, a bad selector."""
    if not selector:
        return None
    server = server or in_cluster_server(env)
    if not server:
        raise ConfigError(
            "--pod-selector: no Kubernetes API: run in a pod (KUBERNETES_SERVICE_HOST) or give --kube-api URL"
        )
    if metrics_port is not None and _port(metrics_port) is None:
        raise ConfigError(f"--pod-metrics-port {metrics_port}: expected 1-65535")
    if not metrics_path.startswith("/"):
        raise ConfigError(f"--pod-metrics-path {metrics_path!r}: expected a path such as /metrics")
    try:
        return Client(
            server,
            node=env_node(env),
            selector=selector,
            token_file=token_file or TOKEN_FILE,
            ca_file=ca_file or (CA_FILE if server.startswith("https:") else None),
            container=container,
            metrics_port=metrics_port,
            metrics_path=metrics_path,
        )
    except ValueError as e:
        raise ConfigError(f"--pod-selector: {e}") from None
