"""A minimal Alertmanager webhook receiver: prints one JSON line per notification to stdout.

The observe compose stack's default receiver (service ``alert-log``): ``docker compose logs -f
alert-log`` shows what Alertmanager would page. Standard library only. The payload is re-encoded
with ``json.dumps`` (ASCII-escaped), so nothing from an alert is printed raw.
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 1 << 20


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
        body = self.rfile.read(length)
        try:
            payload = json.loads(body)
            alerts = payload.get("alerts", []) if isinstance(payload, dict) else []
            for alert in alerts:
                line = {
                    "status": alert.get("status"),
                    "labels": alert.get("labels"),
                    "summary": (alert.get("annotations") or {}).get("summary"),
                    "startsAt": alert.get("startsAt"),
                    "endsAt": alert.get("endsAt"),
                }
                sys.stdout.write(json.dumps(line, ensure_ascii=True, sort_keys=True) + "\n")
            code = 200
        except ValueError:
            sys.stdout.write(json.dumps({"error": "invalid JSON body", "bytes": len(body)}) + "\n")
            code = 400
        sys.stdout.flush()
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listen", default="127.0.0.1:8080", help="HOST:PORT (default 127.0.0.1:8080)")
    args = ap.parse_args(argv)
    host, _, port = args.listen.rpartition(":")
    server = ThreadingHTTPServer((host or "127.0.0.1", int(port)), Handler)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
