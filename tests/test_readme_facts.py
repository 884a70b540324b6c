"""What the README states is what is true (issue 23): numbers come from the settings object and
the capacity vectors, lists from tools/test.sh and the CLI, so that they cannot drift."""

from __future__ import annotations

import re
import statistics
import subprocess
from pathlib import Path

from observe import cli
from observe.settings import Settings
from tests import capacitykit as vectors

ROOT = Path(__file__).resolve().parents[1]
README = " ".join((ROOT / "README.md").read_text().split())  # one line: wrapping does not matter
TEST_SH = (ROOT / "tools" / "test.sh").read_text()


def test_itl_threshold_is_the_settings_one() -> None:
    m = re.search(r"inter-token latency above the ITL SLO \(`itl_slo_seconds`, (\d+) ms by default", README)
    assert m, "the README states the ITL finding's threshold"
    assert int(m.group(1)) == round(Settings().itl_slo_seconds * 1000)
    assert "above 50 ms" not in README


def test_the_test_command_says_what_it_runs() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert "addopts = \"-m 'not slow'\"" in pyproject  # the default suite deselects slow tests...
    for f in ROOT.glob("tests/test_*realvllm*.py"):  # ...and every real-vLLM server test is one
        assert "pytest.mark.slow" in f.read_text(), f.name
    assert "`bash tools/test.sh --all` runs the default suite and then the slow ones" in README
    header = TEST_SH.split("set -euo pipefail", 1)[0]
    assert "and the real-vLLM tests" not in header
    assert "--all    # the default suite, then the slow tests: the real-vLLM tests" in header


def test_the_cpu_torch_wheel_source_is_stated() -> None:
    install = (ROOT / "tools" / "realvllm" / "install.sh").read_text()
    torch = re.search(r'TORCH_VERSION="([^"]+)"', install).group(1)
    assert f"`torch=={torch}`" in README
    assert "https://download.pytorch.org/whl/cpu" in README and "OBSERVE_TORCH_WHEEL" in README


def test_the_apt_list_is_test_shs() -> None:
    block = TEST_SH.split("apt-get install -y -qq", 1)[1].split(">/dev/null", 1)[0]
    packages = block.replace("\\", " ").split() + ["kubectl"]
    assert {"tmux", "fonts-dejavu-core", "chromium"} <= set(packages)
    for pkg in packages:
        assert f"`{pkg}`" in README, pkg


def test_compose_v1_and_v2_are_both_named() -> None:
    assert "Compose v2 (`docker compose`) and Compose v1 (`docker-compose`" in README


def test_every_generate_command_and_top_level_folder_is_in_the_readme() -> None:
    generate = cli.command().commands["generate"].commands
    for name in generate:
        assert f"observe generate {name}" in README or f"|{name}`" in README, name
    assert "`observe generate kubernetes`" in README
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    folders = {p.split("/", 1)[0] for p in tracked if "/" in p and not p.startswith(".")}
    layout = README.split("## Layout", 1)[1].split("## ", 1)[0]
    for folder in folders:
        assert f"`{folder}/`" in layout, folder


def test_capacity_accuracy_is_the_estimate_only_figure() -> None:
    rows = []
    for v in vectors.VECTORS:
        if not v.get("arch") and "accounting" not in v["id"]:
            continue
        r = vectors.predict(v)
        e = vectors.error_pct(v, r)
        if e is not None:
            rows.append((v["id"], e, r.basis))
    est = [e for _, e, b in rows if b == "estimated"]
    worst_id, worst = max(((i, e) for i, e, b in rows if b == "estimated"), key=lambda x: abs(x[1]))
    measured = max(abs(e) for _, e, b in rows if b == "measured")
    want = (
        f"over {len(est)} vectors: median error {statistics.median(abs(e) for e in est):.2f} %, "
        f"worst {worst:+.2f} %"
    )
    assert want in README, want
    assert f"vllm#{worst_id.split('-')[1]}" in README
    assert f"within {measured:.2f} %" in README
