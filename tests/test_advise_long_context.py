"""Issue 32 class G (eval32b 017): a start-up cut off after the weights loaded, of a model whose name states a
context far beyond one GPU's KV cache (gradientai/Llama-3-8B-Instruct-Gradient-1048k) launched with no
--max-model-len: vLLM took the model's own length, and the steps that failed are the ones it sizes (V0's profile
pass runs max(max_model_len, 2048) tokens a step without chunked prefill; the KV cache must hold one request).
The lever is --max-model-len, as a first step; never where the log shows a length in force, another phase, or a
cause the traceback names."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe import advise, pipeline, report
from observe.advise.start import named_context
from observe.model import EngineConfig, Finding
from observe.settings import Settings

FIRST = Settings().long_context_len

DATA = Path(__file__).parent / "data"
MODEL = "gradientai/Llama-3-8B-Instruct-Gradient-1048k"


@pytest.mark.parametrize(
    ("model", "want"),
    [
        (MODEL, (1_048_000, "1048k")),
        ("Qwen/Qwen2.5-7B-Instruct-1M", (1_000_000, "1M")),
        ("microsoft/Phi-3-mini-128k-instruct", (128_000, "128k")),
        ("microsoft/Phi-3-mini-4k-instruct", (4_000, "4k")),
        ("meta-llama/Meta-Llama-3-8B-Instruct", None),  # 8B is the size, not a context
        ("mistralai/Mixtral-8x7B-v0.1", None),
        (None, None),
    ],
)
def test_the_context_a_models_name_states(model: str | None, want: tuple[int, str] | None) -> None:
    assert named_context(model) == want


def test_the_1048k_model_cut_off_after_its_weights_gets_a_first_max_model_len() -> None:
    """eval32b 017 (0.5.0.post1 era, api_server): the command, "Loading model weights took 15.2075 GB", then a
    [rank0] traceback cut in _init_engine."""
    d = report.to_dict(pipeline.diagnose_paths([DATA / "eval32b" / "017.log"]))
    (r,) = [r for r in d["recommendations"] if r["flag"] == "--max-model-len"]
    assert (r["current"], r["suggested"]) == (None, FIRST)
    assert "first step" in r["reason"] and "1,048,000 tokens" in r["reason"]
    assert d["command"].startswith("python -m vllm.entrypoints.openai.api_server")
    assert d["command"].endswith(f"--max-model-len {FIRST}")


def _cut(phase: str = "profiling", **data: object) -> Finding:
    base = {"phase": phase, "cause_cut_off": True, "root_cause": {"type": None, "text": "cut"}}
    return Finding(
        id="engine_startup_failed", severity="critical", title="t", evidence="e", data={**base, **data}
    )


_LOADED = {"model": MODEL, "weights_gib": 15.2075, "engine": "v0", "flags": {"--model": MODEL}}


def _lens(cfg: EngineConfig, f: Finding) -> list:
    return [r.suggested for r in advise.plan(cfg, [f]).recommendations if r.flag == "--max-model-len"]


def test_the_lever_fires_only_where_the_length_is_the_suspect() -> None:
    assert _lens(EngineConfig(**_LOADED), _cut()) == [FIRST]
    # a length in force the log shows: not the model's own
    shown = EngineConfig(**{**_LOADED, "flags": {"--model": MODEL, "--max-model-len": 8192}})
    assert _lens(shown, _cut()) == []
    # the weights never loaded, or it failed while loading them: the length sizes nothing yet
    assert _lens(EngineConfig(**{**_LOADED, "weights_gib": None}), _cut()) == []
    assert _lens(EngineConfig(**_LOADED), _cut("loading")) == []
    # the traceback names its cause (an NCCL error, say): that cause, not the length
    named = _cut(cause_cut_off=False, root_cause={"type": "RuntimeError", "text": "NCCL error"})
    assert _lens(EngineConfig(**_LOADED), named) == []
    # a model whose name states no context, or one at most the first step
    for model in ("meta-llama/Meta-Llama-3-8B-Instruct", "org/model-32k"):
        assert _lens(EngineConfig(**{**_LOADED, "model": model, "flags": {"--model": model}}), _cut()) == []


def test_the_first_step_is_the_settings_long_context_len() -> None:
    """Settings.long_context_len is both the length a name must exceed and the first step."""
    cfg, f = EngineConfig(**_LOADED), _cut()
    got = advise.plan(cfg, [f], settings=Settings(long_context_len=65536)).recommendations
    assert [r.suggested for r in got if r.flag == "--max-model-len"] == [65536]
    assert not advise.plan(cfg, [f], settings=Settings(long_context_len=2_000_000)).recommendations
