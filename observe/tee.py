"""ONE writer for vLLM's log file: copy a program's output line by line to a size-rotated file.

vLLM runs several processes that log (API server, engine core, workers). Python's logging cannot
rotate one file from several processes: each RotatingFileHandler renames the file on its own, and
the others keep writing into the rotated part while a follower reads the new one. So vLLM logs
only to stdout, and this one process writes (and alone rotates) the file::

    python3 tee.py --max-bytes 104857600 --backups 5 /logs/vllm.log -- vllm serve --model …
    vllm serve … 2>&1 | python3 tee.py /logs/vllm.log

With a command after ``--`` it runs it (stdout and stderr into the pipe, signals forwarded, its
exit status returned), so it can be a container's main process: SIGTERM reaches vLLM, and every
line vLLM wrote is in the file before the container stops. Without one it copies standard input.
Each line is also echoed to stdout (``kubectl logs`` / ``docker logs`` still show vLLM's log).
Rotation is RotatingFileHandler's: ``vllm.log`` → ``vllm.log.1`` … ``vllm.log.<backups>`` by
rename, which ``observe.parse.rotation`` and the sidecar's follower read as one log.

Standard library only, and no import of the rest of observe: this one file is copied into vLLM's
container and run by vLLM's own Python, where observe's dependencies are not installed.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO

DEFAULT_MAX_BYTES = 100 * 2**20
DEFAULT_BACKUPS = 5
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class RotatingTee:
    """Write bytes line by line to a size-rotated log file (like RotatingFileHandler) and a stream."""

    def __init__(
        self,
        path: Path,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        backups: int = DEFAULT_BACKUPS,
        echo: IO[str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.backups = backups
        self.echo = echo
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "ab")
        self._lock = threading.Lock()

    def write_line(self, line: bytes) -> None:
        with self._lock:
            if self._fh.closed:
                return
            if self.max_bytes and self._fh.tell() + len(line) > self.max_bytes and self._fh.tell() > 0:
                self._rotate()
            self._fh.write(line)
            self._fh.flush()
        if self.echo is not None:
            try:
                self.echo.write(line.decode("utf-8", "replace"))
                self.echo.flush()
            except (OSError, ValueError):
                self.echo = None  # a closed terminal must not stop the log

    def _part(self, n: int) -> Path:
        # RotatingFileHandler's naming (observe.parse.rotation.numbered)
        return self.path.with_name(f"{self.path.name}.{n}")

    def _rotate(self) -> None:
        self._fh.close()
        for i in range(self.backups - 1, 0, -1):
            if self._part(i).exists():
                os.replace(self._part(i), self._part(i + 1))
        if self.backups > 0:
            os.replace(self.path, self._part(1))
        else:
            self.path.unlink()
        self._fh = open(self.path, "ab")

    def pump(self, stream: IO[bytes]) -> None:
        """Copy `stream` until EOF (run in a thread)."""
        for line in iter(stream.readline, b""):
            self.write_line(line)
        self.close()

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()


def run(
    command: Sequence[str],
    tee: RotatingTee,
    *,
    stdin: IO[bytes] | None = None,
    drain_s: float = 5.0,
) -> int:
    """Run `command` with its output through `tee` (or copy `stdin` when there is no command);
    return its exit status (128 + N when signal N ended it)."""
    if not command:
        tee.pump(stdin if stdin is not None else sys.stdin.buffer)
        return 0
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")  # one write per log line, as it happens
    proc = subprocess.Popen(
        list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
    )
    for sig in FORWARDED_SIGNALS:
        signal.signal(sig, lambda signum, _frame: proc.send_signal(signum))
    assert proc.stdout is not None
    pump = threading.Thread(target=tee.pump, args=(proc.stdout,), daemon=True)
    pump.start()
    rc = proc.wait()
    # the pipe ends when the last process holding it exits; a leftover child must not hold us
    pump.join(timeout=drain_s)
    tee.close()
    return 128 - rc if rc < 0 else rc


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1 :]
    parser = argparse.ArgumentParser(
        prog="tee.py",
        description="Write a program's (or stdin's) output to a size-rotated log file and stdout; "
        "the one writer of that file.",
        usage="%(prog)s [--max-bytes N] [--backups K] FILE [-- COMMAND ...]",
    )
    parser.add_argument("file", type=Path, help="the log file (rotated to FILE.1 … FILE.K)")
    parser.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, help="rotate past this size")
    parser.add_argument("--backups", type=int, default=DEFAULT_BACKUPS, help="rotated parts kept")
    args = parser.parse_args(argv)
    if args.max_bytes < 0 or args.backups < 0:
        parser.error("--max-bytes and --backups must be >= 0")
    try:
        tee = RotatingTee(args.file, max_bytes=args.max_bytes, backups=args.backups, echo=sys.stdout)
    except OSError as e:
        parser.exit(2, f"tee.py: error: cannot open {args.file}: {e.strerror or e}\n")
    try:
        return run(command, tee)
    except OSError as e:  # the command cannot be started
        tee.close()
        parser.exit(127, f"tee.py: error: cannot run {command[0]}: {e.strerror or e}\n")


if __name__ == "__main__":
    sys.exit(main())
