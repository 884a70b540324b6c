"""Which files under the kubelet's ``/var/log/pods`` hold the output of the pods a node-level
``observe`` follows. Pure: patterns and names in, answers out.

The kubelet lays a container's output out as
``/var/log/pods/<namespace>_<pod name>_<pod uid>/<container>/<restart count>.log`` (CRI format,
see ``observe.parse.cri``), and rotates it by renaming ``N.log`` to ``N.log.<YYYYMMDD-hhmmss>`` and
gzipping the rotation before that (``N.log.<stamp>.gz``; ``pkg/kubelet/logs/container_log_manager.go``).
Namespace and pod names cannot hold ``_`` (DNS labels / subdomains), so the directory name splits
unambiguously.

Pods are chosen by ``NAMESPACE/POD`` shell patterns (``llm/vllm-*``): the path carries names, not
labels. Selecting by a label selector needs the Kubernetes API (list the node's pods, keep those
whose labels match, map their names to these patterns); observe does not call the API.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass

from observe.errors import ConfigError

__all__ = ["DEFAULT_ROOT", "PodLog", "Selector", "parse_path", "parse_selector", "patterns"]

DEFAULT_ROOT = "/var/log/pods"
_DNS = re.compile(r"^[a-z0-9*?\[\]!.-]+$")  # a name pattern: DNS characters and glob characters
_DIR = re.compile(r"^(?P<ns>[^_/]+)_(?P<pod>[^_/]+)_(?P<uid>[^_/]+)$")
_LOG = re.compile(r"^(?P<restart>\d+)\.log$")


@dataclass(frozen=True)
class Selector:
    """Pods whose namespace and name match these shell patterns, and the container to read."""

    namespace: str
    pod: str
    container: str = "vllm"

    def matches(self, log: PodLog) -> bool:
        return (
            fnmatch.fnmatchcase(log.namespace, self.namespace)
            and fnmatch.fnmatchcase(log.pod, self.pod)
            and fnmatch.fnmatchcase(log.container, self.container)
        )


@dataclass(frozen=True)
class PodLog:
    """What a pod log's path says: whose output it is and after how many restarts."""

    namespace: str
    pod: str
    uid: str
    container: str
    restart: int


def parse_selector(text: str, container: str = "vllm") -> Selector:
    """``NAMESPACE/POD`` (shell patterns, e.g. ``llm/vllm-*``; a bare ``POD`` means any namespace)."""
    ns, _, pod = text.rpartition("/")
    ns = ns or "*"
    for what, value in (("namespace", ns), ("pod", pod), ("container", container)):
        if not value or not _DNS.match(value):
            raise ValueError(
                f"pod selector {text!r}: the {what} pattern {value!r} must be a lower-case DNS name "
                "with shell wildcards (*, ?, [..]), as in llm/vllm-*"
            )
    return Selector(ns, pod, container)


def selectors(texts: list[str], container: str = "vllm") -> list[Selector]:
    """`--pods` patterns, each parsed (`parse_selector`); a bad one is a ConfigError naming --pods."""
    try:
        return [parse_selector(t, container) for t in texts]
    except ValueError as e:
        raise ConfigError(f"--pods: {e}") from None


def patterns(selectors: list[Selector], root: str = DEFAULT_ROOT) -> list[str]:
    """Glob patterns of the live CRI files (``N.log``, never a rotated ``N.log.<stamp>[.gz]``) of
    the selected pods' containers; new pods and restarts match them as they appear."""
    out = []
    for s in selectors:
        pat = posixpath.join(root, f"{s.namespace}_{s.pod}_*", s.container, "*.log")
        if pat not in out:
            out.append(pat)
    return out


def parse_path(path: str) -> PodLog | None:
    """The pod, container and restart count of ``…/<ns>_<pod>_<uid>/<container>/<N>.log``; None
    for any other path (a rotated part, a file elsewhere)."""
    parts = path.rstrip("/").split("/")
    if len(parts) < 3:
        return None
    d, container, name = parts[-3:]
    m, n = _DIR.match(d), _LOG.match(name)
    if m is None or n is None or not container:
        return None
    return PodLog(m.group("ns"), m.group("pod"), m.group("uid"), container, int(n.group("restart")))
