"""Images people can pin: every image in compose and in every overlay has a version tag (no `latest`,
no bare name); the sidecar image is built from a lock of its runtime dependencies, runs as a numeric
non-root user, and its command is `observe sidecar`; the components' sidecar tag is observe's version."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from tests.services import have

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "kubernetes"
DOCKERFILE = (ROOT / "compose" / "Dockerfile.sidecar").read_text()
LOCK = ROOT / "compose" / "requirements.lock"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
OVERLAYS = sorted(p.name for p in (K8S / "overlays").iterdir() if (p / "kustomization.yaml").is_file())
PINNED = re.compile(r"^[\w./-]+(:\d+)?[\w./-]*:(v?\d+\.\d+[\w.-]*)$")  # name:version


def pinned(image: str) -> bool:
    return bool(PINNED.match(image)) and not image.endswith(":latest")


def test_pinned_recognises_unpinned_images():
    assert pinned("vllm/vllm-openai:v0.33.0") and pinned(
        "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04"
    )
    assert (
        not pinned("vllm/vllm-openai:latest")
        and not pinned("vllm/vllm-openai")
        and not pinned("observe-sidecar")
    )


def _default(value: str) -> str:
    """${VAR:-default} -> default (compose's interpolation, as `docker compose` resolves it unset)."""
    return re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", value)


def test_compose_images_are_pinned():
    services = yaml.safe_load((ROOT / "compose" / "docker-compose.yml").read_text())["services"]
    for name, svc in services.items():
        if "build" in svc:  # built here from this tree
            continue
        assert pinned(_default(svc["image"])), (name, svc["image"])
    assert _default(services["vllm"]["image"]).startswith("vllm/vllm-openai:v0.3")
    assert services["dcgm-exporter"]["profiles"] == ["gpu"]


def test_compose_and_kubernetes_run_the_same_dcgm_exporter():
    services = yaml.safe_load((ROOT / "compose" / "docker-compose.yml").read_text())["services"]
    ds = yaml.safe_load((K8S / "components" / "dcgm-exporter" / "daemonset.yaml").read_text())
    (k8s,) = [
        c["image"] for c in ds["spec"]["template"]["spec"]["containers"] if "dcgm-exporter" in c["image"]
    ]
    assert _default(services["dcgm-exporter"]["image"]) == k8s


def test_compose_prometheus_scrapes_dcgm_exporter():
    prom = yaml.safe_load((ROOT / "compose" / "prometheus.yml").read_text())
    jobs = {j["job_name"]: j for j in prom["scrape_configs"]}
    assert jobs["dcgm"]["static_configs"][0]["targets"] == ["dcgm-exporter:9400"]


def sidecar_image() -> str:
    """The sidecar's image as deploy/kubernetes/image/image.yaml names it (the one place)."""
    tag = yaml.safe_load((K8S / "image" / "image.yaml").read_text())["imageTag"]
    assert tag["name"] == "observe-sidecar"  # what the components' patches write
    return f"{tag['newName']}:{tag['newTag']}"


def test_the_sidecar_image_is_named_in_one_place():
    """No kustomization but deploy/kubernetes/image/ sets the sidecar's image; its tag is observe's
    version, in a registry (a name with a host), not a bare local name."""
    assert sidecar_image().endswith(f"/observe-sidecar:{PYPROJECT['project']['version']}")
    assert "." in sidecar_image().split("/")[0]  # a registry host (ghcr.io)
    named = [
        p.relative_to(K8S).as_posix()
        for p in sorted(K8S.rglob("*.yaml"))
        if re.search(r"observe-sidecar:\S", p.read_text())  # a tag written inline
        or ("observe-sidecar" in p.read_text() and re.search(r"(newTag|newName|digest):", p.read_text()))
    ]
    assert named == ["image/image.yaml"], named
    users = sorted(
        p.parent.name
        for p in (K8S / "components").glob("*/kustomization.yaml")
        if re.search(
            r"image: observe-sidecar$", "".join(f.read_text() for f in p.parent.glob("*.yaml")), re.M
        )
    )
    assert users == [
        "node-daemonset",
        "tee",
        "vllm-logging",
        "vllm-logging-kserve",
        "vllm-logging-lws",
        "vllm-logging-lws-leader",
    ]
    for name in users:
        kust = yaml.safe_load((K8S / "components" / name / "kustomization.yaml").read_text())
        assert kust["transformers"] == ["../../image"], name


@pytest.mark.skipif(not have("kubectl"), reason="kubectl not installed")
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_images_are_pinned(overlay: str):
    r = subprocess.run(
        ["kubectl", "kustomize", str(K8S / "overlays" / overlay)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    images = re.findall(r"^\s+image: (\S+)$", r.stdout, re.M)
    assert images and all(pinned(i) for i in images), images
    # every container the components add runs the one image (install-tee too), none a bare name
    docs = [d for d in yaml.safe_load_all(r.stdout) if d]
    ours = [
        c["image"]
        for d in docs
        for c in d.get("spec", {}).get("template", {}).get("spec", {}).get("initContainers", [])
    ]
    assert ours and set(ours) == {sidecar_image()}, ours
    assert not [i for i in images if "observe-sidecar" in i and i != sidecar_image()], images


def test_sidecar_image_installs_the_lock_without_resolving_and_runs_observe_sidecar():
    lines = [ln for ln in DOCKERFILE.splitlines() if ln and not ln.startswith("#")]
    # the base pinned by digest (a moving tag cannot change the image), the lock by hashes
    assert re.fullmatch(r"FROM python:3\.11-slim@sha256:[0-9a-f]{64}", lines[0]), lines[0]
    assert "RUN pip install --no-deps --require-hashes -r requirements.lock" in lines
    assert any(ln.startswith("RUN pip install --no-deps --no-build-isolation .") for ln in lines)
    users = [ln.split()[1] for ln in lines if ln.startswith("USER ")]
    assert users == ["10001"]
    assert 'ENTRYPOINT ["observe"]' in lines and 'CMD ["sidecar"]' in lines
    assert "compileall" in DOCKERFILE  # nothing written at run time: a read-only root file system works


def _lock_tool():
    spec = importlib.util.spec_from_file_location("lock_runtime", ROOT / "tools" / "lock_runtime.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_lock_pins_every_runtime_dependency_and_theirs_with_hashes():
    mod = _lock_tool()
    text = LOCK.read_text()
    pins = mod.read_pins(text)
    for dep in PYPROJECT["project"]["dependencies"]:
        req = Requirement(dep)
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in pins, f"{name} not in compose/requirements.lock"
        assert req.specifier.contains(pins[name]), (dep, pins[name])
    # the closure of the installed dependencies has the same names (versions may move with the venv)
    assert set(mod.closure(PYPROJECT["project"]["dependencies"])) == set(pins)
    # pip-compile --generate-hashes' form: each pin followed by its wheels' sha256, one or more
    entries = re.split(r"\n(?=[A-Za-z])", "\n".join(ln for ln in text.splitlines() if not ln.startswith("#")))
    assert len(entries) == len(pins)
    for entry in entries:
        head, *hashes = [part.strip() for part in entry.split("\\\n")]
        assert re.fullmatch(r"[\w.-]+==\S+", head), entry
        assert hashes and all(re.fullmatch(r"--hash=sha256:[0-9a-f]{64}", h) for h in hashes), entry


def test_lock_tool_refuses_a_pin_without_a_wheel(tmp_path: Path, capsys):
    mod = _lock_tool()
    assert mod.main(["--pins", str(LOCK), "--hashes", str(tmp_path)]) == 1
    assert "no wheel downloaded for: " in capsys.readouterr().err
