"""`observe capacity` messages, through `python -m observe.cli`: a --kv-cache-dtype vLLM knows but
observe cannot size is told apart from one vLLM does not know; no internal field names in messages."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from observe.capacity.sizing import KV_DTYPE_BYTES
from observe.errors import EXIT_CONFIG
from observe.flags import vllmflags

ROOT = Path(__file__).parent.parent
MODEL = ("--model", "meta-llama/Llama-3.1-8B", "--gpu", "H100")
NEWEST = ".".join(map(str, vllmflags.versions_read()[-1]))


def cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "observe.cli", "capacity", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_dtype_vllm_knows_but_observe_cannot_size() -> None:
    known = vllmflags.choices("--kv-cache-dtype", NEWEST)
    assert known, "vLLM's --kv-cache-dtype choices are in observe/data/vllm_flags.json"
    unsized = [d for d in known if d not in KV_DTYPE_BYTES]
    assert unsized  # vLLM 0.33 knows more than observe can size
    r = cli(*MODEL, "--kv-cache-dtype", unsized[0])
    assert r.returncode == EXIT_CONFIG, r.stderr
    assert "knows it but observe cannot size it" in r.stderr and NEWEST in r.stderr
    assert "does not know" not in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_dtype_vllm_does_not_know() -> None:
    every = {
        d
        for v in vllmflags.versions_read()
        for d in vllmflags.choices("--kv-cache-dtype", ".".join(map(str, v))) or ()
    }
    bogus = "fp3_nonsense"
    assert bogus not in every
    r = cli(*MODEL, "--kv-cache-dtype", bogus)
    assert r.returncode == EXIT_CONFIG, r.stderr
    assert "vLLM does not know it" in r.stderr and "cannot size" not in r.stderr
    assert all(d in r.stderr for d in vllmflags.choices("--kv-cache-dtype", NEWEST))


def test_the_sized_dtypes_still_size() -> None:
    r = cli(*MODEL, "--kv-cache-dtype", "fp8", "--concurrency", "4", "--context", "8192")
    assert r.returncode == 0, r.stderr and "KV cache" in r.stdout


_FIELD = re.compile(r"\b[a-z]+(?:_[a-z]+)*_(?:gib|gb|tokens|fits|total)\b|required_kv")


def test_no_internal_field_names_in_messages() -> None:
    runs = [
        cli(*MODEL, "--concurrency", "4", "--context", "8192"),
        cli(*MODEL, "--concurrency", "4"),
        cli(*MODEL, "--concurrency", "4", "--context", "8192", "--vllm-version", "0.10.0"),
        cli(*MODEL, "--max-model-len", "100000000"),
        cli(*MODEL, "--max-model-len", "100000000", "--gpu-memory-utilization", "0.1"),
        cli(*MODEL, "--kv-cache-dtype", "banana"),
    ]
    assert all(r.returncode in (0, 1, 6) for r in runs), [r.stderr for r in runs]
    for r in runs:
        out = r.stdout + r.stderr
        assert not _FIELD.search(out), _FIELD.search(out).group(0)
