"""Write compose/requirements.lock: observe's runtime dependencies and theirs, pinned to the versions
installed in the running Python (the venv the tests pass in), for the sidecar image.

    python tools/lock_runtime.py > compose/requirements.lock

Reads the installed distributions' metadata (importlib.metadata); markers are evaluated for this
interpreter, so run it with the image's Python version (3.11, as compose/Dockerfile.sidecar).
"""

from __future__ import annotations

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


def main() -> int:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = closure(deps)
    sys.stdout.write(
        "# observe's runtime dependencies for the sidecar image, pinned (tools/lock_runtime.py;\n"
        f"# Python {sys.version_info.major}.{sys.version_info.minor}). Installed with --no-deps: "
        "nothing unpinned gets in.\n"
    )
    sys.stdout.writelines(f"{name}=={version}\n" for name, version in pins.items())
    return 0


if __name__ == "__main__":
    sys.exit(main())
