"""Write compose/requirements.lock: observe's runtime dependencies and theirs, pinned to the versions
installed in the running Python (the venv the tests pass in), each with the sha256 of the wheels the
sidecar image installs (`pip install --require-hashes`: a file that differs is refused).

    grep -v '^#' compose/requirements.lock | sed 's/ .*//;/^ *--/d' > /tmp/pins.txt  # or your new pins
    for arch in x86_64 aarch64; do                          # the image's two platforms, from PyPI only
      pip download --isolated --index-url https://pypi.org/simple --no-deps --only-binary=:all: \
        --python-version 3.11 --implementation cp --abi cp311 --abi abi3 --abi none \
        --platform manylinux_2_28_$arch --platform manylinux_2_17_$arch --platform manylinux2014_$arch \
        -r /tmp/pins.txt -d /tmp/wheels/$arch
    done
    python tools/lock_runtime.py --hashes /tmp/wheels/x86_64 /tmp/wheels/aarch64 > compose/requirements.lock

`--pins FILE` (before `--hashes`) keeps the versions of FILE (e.g. the committed lock: new hashes,
same pins) instead of the installed ones; its names must be the dependencies' closure.

(add the manylinux_2_N tags between 2_17 and the image's glibc when a wheel ships only those).
Reads the installed distributions' metadata (importlib.metadata); markers are evaluated for this
interpreter, so run it with the image's Python version (3.11, as compose/Dockerfile.sidecar).
"""

from __future__ import annotations

import hashlib
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(roots: list[str]) -> dict[str, str]:
    """Normalised name -> installed version of every distribution the roots need."""
    out: dict[str, str] = {}
    todo = [Requirement(r) for r in roots]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = _norm(req.name)
        if name in out:
            continue
        dist = metadata.distribution(req.name)
        out[name] = dist.version
        todo.extend(Requirement(r) for r in dist.requires or [])
    return dict(sorted(out.items()))


def wheel_hashes(dirs: list[Path]) -> dict[tuple[str, str], set[str]]:
    """(normalised name, version) -> sha256 of each wheel in `dirs` (as `pip hash` gives it)."""
    out: dict[tuple[str, str], set[str]] = {}
    for d in dirs:
        for whl in sorted(Path(d).glob("*.whl")):
            name, version = whl.name.split("-")[:2]
            out.setdefault((_norm(name), version), set()).add(hashlib.sha256(whl.read_bytes()).hexdigest())
    return out


def read_pins(text: str) -> dict[str, str]:
    """Normalised name -> version of each `name==version` line of a lock (hashes, comments skipped)."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9][\w.-]*)==([^\s\\]+)", line)
        if m:
            out[_norm(m[1])] = m[2]
    return out


def main(argv: list[str]) -> int:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = closure(deps)
    if argv[:1] == ["--pins"] and len(argv) > 1:
        kept = read_pins(Path(argv[1]).read_text())
        if set(kept) != set(pins):
            sys.stderr.write(
                f"{argv[1]} does not name the dependencies' closure: {sorted(set(kept) ^ set(pins))}\n"
            )
            return 1
        pins, argv = dict(sorted(kept.items())), argv[2:]
    if argv[:1] != ["--hashes"] or len(argv) < 2:
        sys.stderr.write("usage: lock_runtime.py --hashes WHEEL_DIR... (see the module's docstring)\n")
        return 2
    hashes = wheel_hashes([Path(a) for a in argv[1:]])
    missing = [f"{n}=={v}" for n, v in pins.items() if (n, v) not in hashes]
    if missing:
        sys.stderr.write(f"no wheel downloaded for: {', '.join(missing)}\n")
        return 1
    sys.stdout.write(
        "# observe's runtime dependencies for the sidecar image, pinned with the sha256 of their wheels\n"
        f"# for linux amd64 and arm64 (tools/lock_runtime.py; Python {sys.version_info.major}."
        f"{sys.version_info.minor}). Installed with --no-deps --require-hashes:\n"
        "# nothing unpinned, nothing that differs, gets in.\n"
    )
    for name, version in pins.items():
        lines = [f"{name}=={version}"] + [f"    --hash=sha256:{h}" for h in sorted(hashes[(name, version)])]
        sys.stdout.write(" \\\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
