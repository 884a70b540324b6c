"""Issue 32 class D: V0's KV-cache size check (``raise_if_cache_size_invalid``, the first step of
``Worker.initialize_cache``, 0.4 → 0.10) raises only "No available memory for the cache blocks" or "The
model's max seq len (N) is larger than the maximum number of tokens that can be stored in KV cache (M)". A
paste cut inside it names the KV sizing refusal (max_model_len_exceeds_kv_cache), and a worker failing in
initialize_cache right after "# GPU blocks: N" (N > 0) is that refusal likely, with --max-model-len N × the
block size. Real excerpts: eval32b 008 and 010 (the blind set's logs), the Ray excerpt of vllm#16318 cut
before its raising source line, and whole tracebacks that name the error themselves (never named twice)."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe import pipeline, report

DATA = Path(__file__).parent / "data"
RAY_16318 = DATA / "excerpts" / "cut-traceback-no-cache-memory-v0-ray-vllm-16318.log"


def _diagnose(path: Path) -> dict:
    return report.to_dict(pipeline.diagnose_paths([path]))


def _ids(d: dict) -> set[str]:
    return {f["id"] for f in d["findings"]}


def _kv(d: dict) -> dict:
    (f,) = [f for f in d["findings"] if f["id"] == "max_model_len_exceeds_kv_cache"]
    return f


def _flags(d: dict) -> dict:
    return {r["flag"]: r for r in d["recommendations"]}


def _cut_before_raise(tmp_path: Path) -> Path:
    """vllm#16318's Ray worker frames, cut right after the check's own frame (its raising line left out)."""
    lines = RAY_16318.read_text().splitlines()
    keep = lines[: next(i for i, x in enumerate(lines) if "in raise_if_cache_size_invalid" in x) + 1]
    out = tmp_path / "cut-at-the-kv-check.log"
    out.write_text("\n".join(keep) + "\n")
    return out


@pytest.mark.parametrize("which", ["008", "16318-cut"])
def test_a_traceback_cut_inside_the_kv_size_check_names_the_kv_refusal(which: str, tmp_path: Path) -> None:
    """The check's call (008: 0.4.1, under the record's traceback header) or its frame (vllm#16318, headless
    Ray frames) with no exception line: the refusal is KV sizing for certain; the GPU blocks are not in the
    paste, so the tokens that fit are unknown (a note, no number), and no graph lever (--enforce-eager)."""
    path = DATA / "eval32b" / "008.log" if which == "008" else _cut_before_raise(tmp_path)
    d = _diagnose(path)
    f = _kv(d)
    assert f["severity"] == "critical" and f["data"]["certain"] is True and f["data"]["cause_cut_off"] is True
    assert f["data"]["max_model_len_fits"] is None and "raise_if_cache_size_invalid" in f["evidence"]
    assert "--enforce-eager" not in _flags(d)
    assert any("max_model_len_exceeds_kv_cache" in n["finding_ids"] for n in d["advice_notes"])
    if which == "008":  # the worker's "Error executing method initialize_cache" is explained by it
        (note,) = [n["text"] for n in d["advice_notes"] if n["finding_ids"] == ["engine_startup_failed"]]
        assert note.startswith("the failure is explained by max_model_len_exceeds_kv_cache")


def test_initialize_cache_failing_after_the_gpu_blocks_is_likely_the_kv_refusal_with_its_length() -> None:
    """eval32b 010 (Ray, 0.4.3-0.5): "# GPU blocks: 378" then initialize_cache raised, cut before the frames
    say where: likely the check (378 × 16 = 6,048 tokens); the length that fits is suggested, its value in
    force unknown."""
    d = _diagnose(DATA / "eval32b" / "010.log")
    f = _kv(d)
    assert f["data"]["certain"] is False and "likely" in f["title"]
    assert (f["data"]["num_gpu_blocks"], f["data"]["kv_tokens"]) == (378, 378 * 16)
    r = _flags(d)["--max-model-len"]
    assert (r["current"], r["suggested"]) == (None, 378 * 16)


@pytest.mark.parametrize(
    "path",
    [
        RAY_16318,  # cut after the raising source line: "No available memory …", read from the source
        DATA / "corpus" / "051-v0-6-4-compose-no-available-memory-mqllmengine.log",  # the exception line
    ],
)
def test_the_check_under_its_own_error_is_that_error_only(path: Path) -> None:
    """Where the paste holds the line that says which error the check raised, that error is the finding; the
    check's frame above it adds no second one."""
    d = _diagnose(path)
    assert "no_kv_cache_memory" in _ids(d) and "max_model_len_exceeds_kv_cache" not in _ids(d)


def test_initialize_cache_failing_without_blocks_or_the_check_frame_names_no_kv_finding() -> None:
    """eval32b 021 (V0 0.8, mp worker): the frames stop at initialize_cache itself, no GPU blocks printed:
    the check, the allocation or the graph capture — no KV finding, the note says what decides."""
    d = _diagnose(DATA / "eval32b" / "021.log")
    assert "engine_startup_failed" in _ids(d)
    assert not {"no_kv_cache_memory", "max_model_len_exceeds_kv_cache"} & _ids(d)
