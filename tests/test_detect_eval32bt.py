"""The classes of the blind set eval32bt fixed after its measurement (tests/data/eval32bt/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, critical, diagnose, lines, notes, suggestions


def test_mamba_cache_blocks_refusal_wrapped_by_the_worker_is_a_refused_start() -> None:
    """BT1 (003): the engine core's "RuntimeError: Worker failed with error 'max_num_seqs (1024) exceeds available
    Mamba cache blocks (600). … Please lower max_num_seqs to at most 600 or increase gpu_memory_utilization.'" (V1's
    start-up check, vllm/config/compilation.py, before CUDA-graph capture): the launch vLLM refused, not a crash while
    serving; its numbers read before the quoted text is redacted; --max-num-seqs 600 (vLLM's bound) the lever, more
    memory (--gpu-memory-utilization) said as vLLM's other one."""
    d = diagnose("eval32bt/003.log")
    rej = by_id(d).get("launch_rejected")
    assert rej is not None and rej["severity"] == "critical", d["findings"]
    assert "engine_crashed" not in by_id(d) and "engine_error" not in by_id(d), d["findings"]
    assert (rej["data"]["max_num_seqs"], rej["data"]["mamba_blocks"]) == (1024, 600), rej
    assert "1024" in rej["evidence"] and "600" in rej["evidence"] and "<redacted" not in rej["evidence"], rej
    assert suggestions(d).get("--max-num-seqs") == [600], d["recommendations"]
    (rec,) = [r for r in d["recommendations"] if r["flag"] == "--max-num-seqs"]
    assert rec["current"] == 1024, rec  # the refusal names the value in force: never "unknown" beside it
    assert "--gpu-memory-utilization" in notes(d, "launch_rejected"), d["advice_notes"]


def test_the_bare_mamba_cache_blocks_refusal_is_a_refused_start() -> None:
    """BT1 (021): the lone "ValueError: max_num_seqs (256) exceeds available Mamba cache blocks (161)." (no line of
    vLLM's around it): the same start-up refusal; --max-num-seqs 161, never above vLLM's bound."""
    d = diagnose("eval32bt/021.log")
    assert by_id(d).get("launch_rejected") is not None and critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert suggestions(d).get("--max-num-seqs") == [161], d["recommendations"]


def test_a_workers_error_record_of_the_refusal_is_read_the_same(tmp_path: Path) -> None:
    """BT1's other form (vLLM PR #38270's own excerpt): a worker's ERROR record of the multiprocess executor carrying
    the ValueError; and a --max-num-seqs in force at the refused value is never suggested again."""
    log = tmp_path / "worker.log"
    log.write_text(
        "(Worker_TP1 pid=509811) ERROR 03-26 18:27:04 [multiproc_executor.py:949] ValueError: max_num_seqs (1024) "
        "exceeds available Mamba cache blocks (512). Each decode sequence requires one Mamba cache block, so CUDA "
        "graph capture cannot proceed. Please lower max_num_seqs to at most 512 or increase gpu_memory_utilization.\n"
    )
    d = diagnose(log)
    assert by_id(d).get("launch_rejected") is not None, d["findings"]
    assert suggestions(d).get("--max-num-seqs") == [512], d["recommendations"]


def test_mamba_words_without_the_checks_numbers_are_not_read_as_its_refusal(tmp_path: Path) -> None:
    """The other side of BT1: the line cut inside the check's numbers, or numbers the check never raises on
    (max_num_seqs within the pool), are not its refusal: no launch refusal, no --max-num-seqs value made up."""
    first = lines("eval32bt/021.log")[0]
    for i, text in enumerate((first[:-12], first.replace("(256)", "(128)"))):
        log = tmp_path / f"other{i}.log"
        log.write_text(text + "\n")
        d = diagnose(log)
        assert "launch_rejected" not in by_id(d), (text, d["findings"])
        assert "--max-num-seqs" not in suggestions(d), (text, d["recommendations"])


def test_vllm_serve_refusing_the_model_option_is_a_refused_launch() -> None:
    """BT2 (020): the `vllm` console script's traceback ending "ValueError: With `vllm serve`, you should provide the
    model as a positional argument or in a config file instead of via the `--model` option." (FlexibleArgumentParser
    .parse_args, 0.8.5 → 0.11): the launch refused at argument parsing, before any engine: launch_rejected, never a
    crash; vLLM's words kept whole in the evidence; the fix the command line's shape (`vllm serve <model> …`), no
    flag value."""
    d = diagnose("eval32bt/020.log")
    rej = by_id(d).get("launch_rejected")
    assert rej is not None and critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d) and "engine_error" not in by_id(d), d["findings"]
    assert rej["data"]["reason"] == "model_option" and "positional" in rej["title"], rej
    assert "`vllm serve`" in rej["evidence"] and "<redacted" not in rej["evidence"], rej
    assert "vllm serve <model>" in notes(d, "launch_rejected"), d["advice_notes"]
    assert not d["recommendations"], d["recommendations"]


def test_the_older_serve_entrys_wording_is_read_the_same(tmp_path: Path) -> None:
    """BT2's older form (vllm/scripts.py serve, then entrypoints/cli/serve.py, before 0.8.5): the same refusal without
    "or in a config file"."""
    log = tmp_path / "old.log"
    log.write_text(
        "ValueError: With `vllm serve`, you should provide the model as a positional argument instead of via the "
        "`--model` option.\n"
    )
    d = diagnose(log)
    assert by_id(d).get("launch_rejected", {}).get("data", {}).get("reason") == "model_option", d["findings"]


def test_the_later_deprecation_warning_of_the_model_option_is_no_refusal(tmp_path: Path) -> None:
    """The other side of BT2: later releases only WARN with the same words (argparse_utils.py, "The `--model` option
    will be removed in …") and go on starting: no refusal, nothing critical."""
    words = lines("eval32bt/020.log")[-1].split("ValueError: ", 1)[1]
    log = tmp_path / "warned.log"
    log.write_text(
        f"WARNING 05-15 09:06:22 [argparse_utils.py:257] {words} The `--model` option will be removed in a future "
        "version.\n"
    )
    d = diagnose(log)
    assert "launch_rejected" not in by_id(d) and not critical(d), d["findings"]
