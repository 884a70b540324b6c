"""A container's output written and rotated on disk the way the kubelet and containerd do it.

- **Writing** (containerd ``internal/cri/io/logger.go``): each line of the container's stdout or
  stderr becomes ``<RFC3339Nano time> <stream> <F> <text>\\n``; a line longer than the runtime's
  buffer (``max_container_log_line_size``, 16 KiB by default; smaller here so that it happens
  often) becomes ``P`` records of that many bytes ended by one ``F`` record. Go's RFC3339Nano
  trims trailing zeros of the fraction (and drops it when it is zero).
- **Rotation** (kubelet ``pkg/kubelet/logs/container_log_manager.go``, ``rotateLog``): list
  ``<log>.*``; remove unused files (``*.tmp``, and an uncompressed file whose ``.gz`` exists);
  remove the oldest rotated files beyond ``MaxFiles - 2``; gzip every uncompressed rotated file
  to ``<f>.gz.tmp``, rename it to ``<f>.gz`` and remove ``<f>``; rename ``<log>`` to
  ``<log>.<YYYYMMDD-hhmmss>``; then ``ReopenContainerLog``: the runtime closes its descriptor and
  creates ``<log>`` afresh. Lines the container writes between the rename and the reopen land in
  the renamed file.
"""

from __future__ import annotations

import gzip
import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

TIMESTAMP_FORMAT = "%Y%m%d-%H%M%S"  # Go's "20060102-150405"


def rfc3339nano(t: datetime, nanos: int) -> str:
    frac = f"{nanos:09d}".rstrip("0")
    return t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"


class Container:
    """One container's log under ``root/<ns>_<pod>_<uid>/<container>/<restart>.log``."""

    def __init__(
        self,
        root: Path,
        namespace: str = "llm",
        pod: str = "vllm-7d9f-abcde",
        uid: str = "0b7e2c1a-5d4e-4f6a-9b8c-1d2e3f4a5b6c",
        container: str = "vllm",
        restart: int = 0,
        buffer: int = 64,
        max_files: int = 5,
    ) -> None:
        self.dir = root / f"{namespace}_{pod}_{uid}" / container
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log = self.dir / f"{restart}.log"
        self.buffer = buffer
        self.max_files = max_files
        self.now = datetime(2026, 12, 2, 5, 0, 0, tzinfo=UTC)
        self.nanos = 0
        self.records = 0
        self._w = open(self.log, "ab")

    def write(self, text: str, stream: str = "stdout") -> None:
        """One line of the container's output, as the runtime records it."""
        self.nanos += 1_000_100
        stamp = rfc3339nano(self.now, self.nanos % 1_000_000_000)
        data = text.encode()
        chunks = [data[i : i + self.buffer] for i in range(0, len(data), self.buffer)] or [b""]
        for i, chunk in enumerate(chunks):
            tag = b"F" if i == len(chunks) - 1 else b"P"
            self._w.write(stamp.encode() + b" " + stream.encode() + b" " + tag + b" " + chunk + b"\n")
            self.records += 1
        self._w.flush()

    def rotate(self, between: list[str] | None = None, during: Callable[[], object] | None = None) -> None:
        """``rotateLog``; `between`: lines the container writes after the rename, before the reopen;
        `during`: called right after the rename (a reader that looks mid-rotation)."""
        self.now += timedelta(seconds=10)  # containerLogMonitorInterval: one rotation per stamp
        logs = sorted(str(p) for p in self.dir.glob(self.log.name + ".*"))
        inuse = []
        for f in logs:
            if f.endswith(".tmp") or (not f.endswith(".gz") and f + ".gz" in logs):
                os.remove(f)
            else:
                inuse.append(f)
        keep = max(self.max_files - 2, 0)
        for f in inuse[: len(inuse) - keep]:
            os.remove(f)
        for f in inuse[len(inuse) - keep :]:
            if f.endswith(".gz"):
                continue
            with (
                open(f, "rb") as r,
                open(f + ".gz.tmp", "wb") as tmp,
                gzip.GzipFile(fileobj=tmp, mode="wb") as z,
            ):
                shutil.copyfileobj(r, z)
            os.rename(f + ".gz.tmp", f + ".gz")
            os.remove(f)
        os.rename(self.log, f"{self.log}.{self.now.strftime(TIMESTAMP_FORMAT)}")
        if during is not None:
            during()
        for line in between or []:
            self.write(line)
        self._w.close()  # ReopenContainerLog
        self._w = open(self.log, "ab")

    def close(self) -> None:
        self._w.close()
