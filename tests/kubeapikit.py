"""What the tests of the node sidecar's pod discovery share (no test module imports another): a
stand-in for the Kubernetes API's pod list, and the PodList it replays
(tests/data/k8s/podlist-node.json, provenance in tests/data/PROVENANCE.md)."""

from __future__ import annotations

import copy
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

PODLIST = json.loads((Path(__file__).parent / "data" / "k8s" / "podlist-node.json").read_text())
TOKEN = "eyJhbGciOiJSUzI1NiJ9.test-token"


def pod_like(item: dict, *, namespace: str, name: str, uid: str, labels: dict[str, str]) -> dict:
    """A pod of the recorded PodList renamed (the kubelet_sim pod a test writes the logs of)."""
    p = copy.deepcopy(item)
    p["metadata"].update(namespace=namespace, name=name, uid=uid, labels=labels)
    return p


@contextmanager
def api_server(doc: dict, tls: tuple[Path, Path] | None = None) -> Iterator[tuple[str, list[dict]]]:
    """A stand-in for the API server's pod list: 401 without the token, the selectors applied."""
    asked: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a) -> None:
            pass

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            asked.append({"path": url.path, **q})
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self._send(
                    401, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 401}
                )
            if url.path != "/api/v1/pods":
                return self._send(
                    404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404}
                )
            node = q.get("fieldSelector", "").removeprefix("spec.nodeName=")
            want = dict(kv.split("=", 1) for kv in q.get("labelSelector", "").split(",") if "=" in kv)
            out = copy.deepcopy(doc)
            out["items"] = [
                p
                for p in out["items"]
                if p["spec"].get("nodeName") == node
                and all(p["metadata"].get("labels", {}).get(k) == v for k, v in want.items())
            ]
            self._send(200, out)

        def _send(self, code: int, obj: dict) -> None:
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    scheme = "http"
    if tls is not None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(tls[0]), str(tls[1]))
        httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
        scheme = "https"
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"{scheme}://127.0.0.1:{httpd.server_address[1]}", asked
    finally:
        httpd.shutdown()
        httpd.server_close()
