"""The release workflow (.github/workflows/release.yml): on a version tag it builds
compose/Dockerfile.sidecar for amd64 and arm64 and pushes it, with an SBOM and provenance, to the
one name the manifests use (deploy/kubernetes/image/image.yaml); its agreement step (run here as
GitHub runs it: bash, the repository as working directory) refuses a tag the version does not match."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
IMAGE = yaml.safe_load((ROOT / "deploy" / "kubernetes" / "image" / "image.yaml").read_text())["imageTag"]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _steps() -> list[dict]:
    return _workflow()["jobs"]["sidecar-image"]["steps"]


def _step(uses: str) -> dict:
    (step,) = [s for s in _steps() if s.get("uses", "").startswith(uses + "@")]
    return step


def test_builds_both_platforms_from_the_sidecar_dockerfile_on_tags():
    wf = _workflow()
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` key as True
    assert on == {"push": {"tags": ["v*.*.*"]}}
    build = _step("docker/build-push-action")["with"]
    assert build["file"] == "compose/Dockerfile.sidecar" and build["context"] == "."
    assert sorted(build["platforms"].split(",")) == ["linux/amd64", "linux/arm64"]
    assert build["push"] is True and build["sbom"] is True and build["provenance"]
    assert build["tags"] == "${{ steps.image.outputs.name }}:${{ steps.image.outputs.tag }}"
    # emulation for the arm64 half, and the digest the push gave is what is attested and shown
    assert _step("docker/setup-qemu-action") and _step("docker/setup-buildx-action")
    attest = _step("actions/attest-build-provenance")["with"]
    assert attest["subject-digest"] == "${{ steps.build.outputs.digest }}"
    assert _workflow()["jobs"]["sidecar-image"]["permissions"]["packages"] == "write"


def _agree(tmp_path: Path, tag: str, owner: str) -> tuple[int, str, str]:
    (step,) = [s for s in _steps() if s.get("id") == "image"]
    out = tmp_path / "github_output"
    out.write_text("")
    env = {
        "GITHUB_REF_NAME": tag,
        "GITHUB_REPOSITORY_OWNER": owner,
        "GITHUB_OUTPUT": str(out),
        "PATH": "/usr/bin:/bin",
    }
    r = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=ROOT, env=env, capture_output=True, text=True)
    return r.returncode, r.stdout, out.read_text()


def test_the_agreement_step_pushes_to_the_manifests_image(tmp_path: Path):
    owner = IMAGE["newName"].split("/")[1]
    rc, _, out = _agree(tmp_path, f"v{VERSION}", owner.upper())  # GitHub owners may be capitalised
    assert rc == 0
    assert out.splitlines() == [f"name={IMAGE['newName']}", f"tag={VERSION}"]
    assert IMAGE["newTag"] == VERSION


def test_the_agreement_step_refuses_another_version_or_owner(tmp_path: Path):
    owner = IMAGE["newName"].split("/")[1]
    rc, stdout, out = _agree(tmp_path, "v99.0.0", owner)
    assert rc == 1 and "must agree" in stdout and out == ""
    rc, stdout, out = _agree(tmp_path, f"v{VERSION}", owner + "-fork")
    assert rc == 1 and "this repository pushes to ghcr.io/" in stdout and out == ""


def test_the_docs_name_the_manifests_image():
    doc = (ROOT / "docs" / "kubernetes.md").read_text()
    assert f"`{IMAGE['newName']}:{IMAGE['newTag']}`" in doc
    assert "Init:ImagePullBackOff" in doc and "components/node-daemonset" in doc
