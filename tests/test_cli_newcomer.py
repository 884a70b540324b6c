"""What a new user meets (issue 23): the numbers, exit codes and wordings the CLI prints agree
with what is true and with the README's exit-code table. Every test runs the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from observe import capacity, errors

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def observe(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OBSERVE_")}
    env.update({"PYTHONPATH": str(ROOT), "COLUMNS": "200"})
    return subprocess.run(
        [sys.executable, "-m", "observe.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=timeout,
    )


# ---------------------------------------------------------------- capacity
def test_capacity_exits_1_when_it_says_vllm_refuses_to_start() -> None:
    r = observe("capacity", "--model", "llama-3-8b", "--gpu", "L4", "--gpu-memory-utilization", "0.76")
    assert "does NOT fit" in r.stdout
    assert r.returncode == errors.EXIT_FOUND, r.stdout + r.stderr
    r = observe("capacity", "--model", "llama-3-8b", "--gpu", "L4", "--gpu-memory-utilization", "0.9")
    assert "8,192: fits" in r.stdout and r.returncode == errors.EXIT_OK


@pytest.mark.parametrize("flag", ["--max-model-len", "--context"])
def test_capacity_refuses_a_length_above_the_models_own_limit(flag: str) -> None:
    limit = capacity.model_spec("llama-3-8b").max_pos
    assert limit == 8192
    extra = ["--concurrency", "2"] if flag == "--context" else []
    r = observe("capacity", "--model", "llama-3-8b", "--gpu", "A10G", flag, "100000", *extra)
    assert r.returncode == errors.EXIT_CONFIG, r.stdout + r.stderr
    assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1
    assert f"{flag} 100,000 is above" in r.stderr and "8,192" in r.stderr
    # the limit itself is accepted
    r = observe("capacity", "--model", "llama-3-8b", "--gpu", "H100", flag, str(limit), *extra)
    assert r.returncode == errors.EXIT_OK, r.stderr


def test_capacity_largest_that_fits_never_exceeds_the_models_limit() -> None:
    spec = capacity.model_spec("llama-3-8b")
    r = capacity.compute(spec, gpu_memory_gib=79.19, max_model_len=spec.max_pos)
    assert r.fits and r.max_model_len_that_fits <= spec.max_pos
    r = capacity.compute(spec, gpu_memory_gib=22.05, gpu_memory_utilization=0.8)
    assert not r.fits and 0 < r.max_model_len_that_fits <= spec.max_pos


# ---------------------------------------------------------------- config show, --help
def test_config_show_prints_each_section_header_once(tmp_path: Path) -> None:
    r = observe("config", "show")
    assert r.returncode == 0, r.stderr
    headers = [ln for ln in r.stdout.splitlines() if ln.startswith("# ---- ")]
    assert len(headers) == len(set(headers)) >= 4, headers
    # what it prints is still what --config reads back
    (tmp_path / "s.yml").write_text(r.stdout)
    again = observe("config", "show", "--config", str(tmp_path / "s.yml"))
    assert again.returncode == 0 and again.stdout == r.stdout


def _leaf_paths() -> list[tuple[str, ...]]:
    from observe import cli

    out: list[tuple[str, ...]] = [()]

    def walk(cmd, path):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                out.append((*path, name))
                walk(sub, (*path, name))

    walk(cli.command(), ())
    return out


@pytest.mark.parametrize("path", _leaf_paths(), ids=lambda p: " ".join(p) or "observe")
def test_help_shows_no_bool_placeholder_for_switches(path: tuple[str, ...]) -> None:
    r = observe(*path, "--help")
    assert r.returncode == 0, r.stderr
    assert "<bool>" not in r.stdout and "BOOL" not in r.stdout


# ---------------------------------------------------------------- compare
def test_compare_prints_human_labels_and_one_arrow() -> None:
    r = observe("compare", str(EXAMPLES / "kv-pressure"), str(EXAMPLES / "kv-pressure-applied"))
    assert r.returncode == 0, r.stderr
    assert "->" not in r.stdout and "→" in r.stdout
    labels = [ln[:48].strip() for ln in r.stdout.splitlines()[1:] if ln[:1] not in ("", " ")]
    rows = [x for x in labels if not x.startswith(("flag ", "the change", "not enough"))]
    assert rows and not [x for x in rows if "_" in x], rows  # no snake_case key
    assert "generation throughput (tokens/s)" in rows and "TTFT p99 (s)" in rows
    assert "flag --kv-cache-memory-bytes: 2097152 → 37748736" in r.stdout


# ---------------------------------------------------------------- the report's numbers
@pytest.mark.parametrize(
    "folder, exact",
    [
        ("kv-pressure", "2 MiB (--kv-cache-memory-bytes 2,097,152)"),
        ("normal", "64 MiB (--kv-cache-memory-bytes 67,108,864)"),
    ],
)
def test_kv_memory_line_is_the_flags_exact_figure(folder: str, exact: str) -> None:
    log = (EXAMPLES / folder / "vllm.log").read_text()
    assert "GiB for KV cache" in log  # vLLM's own line, rounded to 0.1 GiB, is there too
    text = observe("diagnose", str(EXAMPLES / folder))
    assert f"KV memory              {exact}" in text.stdout, text.stdout
    html = observe("diagnose", str(EXAMPLES / folder), "--format", "html")
    assert f"<th>KV memory available</th><td>{exact}</td>" in html.stdout


def test_html_header_shows_the_measured_preemptions_and_their_source() -> None:
    r = observe("diagnose", str(EXAMPLES / "kv-pressure"), "--format", "html")
    assert r.returncode == 0, r.stderr
    keynums = r.stdout.split('<p class="keynums">', 1)[1].split("</p>", 1)[0]
    assert "<b>1,126</b> preemptions" in keynums and "(from /metrics)" in keynums
    assert "preemption warnings" not in keynums
    text = observe("diagnose", str(EXAMPLES / "kv-pressure")).stdout
    assert "preemptions            1,126 (from /metrics)" in text


def test_html_metrics_row_is_labelled_rows_not_a_key_value_dump() -> None:
    r = observe("diagnose", str(EXAMPLES / "kv-pressure"), "--format", "html")
    row = r.stdout.split("<th>from /metrics</th>", 1)[1].split("</table>", 1)[0]
    assert "<th>generation throughput (tokens/s)</th><td>3,721.6</td>" in row
    assert "<th>TTFT p99 (s)</th>" in row
    tables = "".join(t.split("</table>", 1)[0] for t in r.stdout.split('<table class="facts')[1:])
    assert "generation_tps" not in tables and "ttft_p50_s" not in tables and ": " not in row


# ---------------------------------------------------------------- stdin, nothing read
def test_stdin_has_one_name_in_a_report() -> None:
    r = observe("diagnose", "-", stdin=(EXAMPLES / "kv-pressure" / "vllm.log").read_text())
    assert r.returncode == 0, r.stderr
    assert "== <stdin>" in r.stdout and "source: <stdin> (" in r.stdout and "at <stdin>:" in r.stdout
    assert "stdin" not in r.stdout.replace("<stdin>", "")
    assert "source: -" not in r.stdout


def test_no_vllm_lines_is_said_once(tmp_path: Path) -> None:
    x = tmp_path / "x.log"
    x.write_text("hello\n")
    r = observe("diagnose", str(x))
    assert r.returncode == errors.EXIT_INPUT
    assert r.stderr.strip() == f"observe: error: no vLLM log lines found in {x}"
    assert r.stderr.count("no vLLM log lines found") == 1


# ---------------------------------------------------------------- exit codes of the live commands
def _popen(*args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OBSERVE_")}
    env.update({"PYTHONPATH": str(ROOT), "COLUMNS": "120"})
    return subprocess.Popen(
        [sys.executable, "-m", "observe.cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_sidecar_reports_a_wrong_url_at_start_and_exits_130_on_ctrl_c() -> None:
    import signal

    from tests.services import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    proc = _popen(
        "sidecar", "--vllm-url", dead, "--listen", f"127.0.0.1:{free_port()}", "--scrape-interval", "1h"
    )
    try:
        assert proc.stderr is not None
        lines = []
        while not any("serving" in ln for ln in lines):  # the sidecar is up once it says so
            line = proc.stderr.readline()
            assert line, "".join(lines)
            lines.append(line)
        # the first scrape happened before it served: the wrong URL is already told
        told = [ln for ln in lines if "warning:" in ln and dead in ln]
        assert told and lines.index(told[0]) < len(lines) - 1, lines
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == errors.EXIT_INTERRUPTED, err
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_top_exits_130_on_ctrl_c(replay_metrics) -> None:
    import signal

    from tests.services import wait_until

    snap = (EXAMPLES / "kv-pressure" / "metrics-kv-pressure-1.txt").read_text()
    url, ctl = replay_metrics([snap])
    proc = _popen("top", url, "--interval", "0.2s")
    try:
        wait_until(lambda: ctl.requests >= 3, timeout=60, what="top reading the server")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == errors.EXIT_INTERRUPTED, err
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_top_once_on_a_down_server_exits_3(replay_metrics) -> None:
    from tests.services import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    r = observe("top", dead, "--once")
    assert r.returncode == errors.EXIT_TARGET, r.stdout + r.stderr
    assert "DOWN" in r.stdout and f"{dead} is down" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    snap = (EXAMPLES / "kv-pressure" / "metrics-kv-pressure-1.txt").read_text()
    url, _ = replay_metrics([snap])
    assert observe("top", url, "--once").returncode == errors.EXIT_OK


def test_top_log_reads_an_existing_logs_history_first(replay_metrics) -> None:
    snap = (EXAMPLES / "kv-pressure" / "metrics-kv-pressure-5.txt").read_text()
    url, _ = replay_metrics([snap])
    r = observe("top", url, "--log", str(EXAMPLES / "kv-pressure" / "vllm.log"), "--once")
    assert r.returncode == errors.EXIT_OK, r.stderr
    assert "findings (logs): none" not in r.stdout
    assert "[critical] kv_cache_saturated" in r.stdout


# ---------------------------------------------------------------- current GPUs (issue 20, item 10)
@pytest.mark.parametrize(
    "name, total, marketing_gb",
    [
        ("B200", 178.35, 192),
        ("GB200", 184.31, 192),
        ("MI300X", 191.98, 192),
        ("H20", 95.12, 96),
        ("L20", 44.52, 48),
        ("H200", 139.72, 141),
        ("L40S", 44.52, 48),
        ("RTX-5090", 31.37, 32),
    ],
)
def test_current_gpus_have_their_torch_reported_total(name: str, total: float, marketing_gb: int) -> None:
    g = capacity.gpu_spec(name)
    assert g.total_gib == total and g.source
    # the driver's total is below the marketing size (GB, or GiB of HBM less the driver's reserve)
    assert g.total_gib * 2**30 < marketing_gb * 2**30
    assert g.exact or g.source.startswith("derived")
    r = observe("capacity", "--model", "llama-3-8b", "--gpu", name.lower(), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert f'"gpu_memory_gib": {total}' in r.stdout
