"""The flags of an installed vLLM, as its own `vllm serve` argument parser defines them.

vLLM may live in another interpreter (another venv): `probe.py` is run there by path and answers
in JSON, so observe never imports vLLM itself.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from observe.errors import ConfigError
from observe.flags import cmdline, probe

_PROBE = Path(probe.__file__)
_CACHE: dict[str, VllmFlags] = {}


def _probe_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "VLLM_LOGGING_LEVEL": "ERROR",
        }
    )
    return env


def _run_probe(python: str, args: list[str], timeout: float = 180.0) -> dict[str, Any]:
    try:
        cp = subprocess.run(
            [python, str(_PROBE), *args], capture_output=True, text=True, timeout=timeout, env=_probe_env()
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ConfigError(f"cannot ask the installed vLLM ({python}) about its flags: {e}") from None
    for line in cp.stdout.splitlines():
        if line.startswith(probe.MARK):
            res = json.loads(line[len(probe.MARK) :])
            if "error" in res and "ok" not in res:
                raise ConfigError(res["error"])
            return res
    tail = (cp.stderr or cp.stdout).strip().splitlines()[-1:] or ["no output"]
    raise ConfigError(f"cannot ask the installed vLLM ({python}) about its flags: {tail[0]}")


class VllmFlags:
    """The flags of one installed vLLM, as its own `vllm serve` argument parser defines them."""

    def __init__(self, python: str, version: str | None, actions: list[dict[str, Any]]) -> None:
        self.python = python
        self.version = version
        self._by_opt: dict[str, dict[str, Any]] = {}
        for a in actions:
            for opt in a["options"]:
                self._by_opt[opt] = a

    @classmethod
    def probe(cls, python: str | None = None) -> VllmFlags:
        """Ask the vLLM installed for `python` (default: this interpreter); cached per interpreter."""
        python = python or sys.executable
        if python not in _CACHE:
            res = _run_probe(python, ["describe"])
            _CACHE[python] = cls(python, res.get("version"), res.get("actions", []))
        return _CACHE[python]

    def canonical(self, flag: str) -> str:
        """The flag's spelling in vLLM's parser (`--max_num_seqs` → `--max-num-seqs`, `-tp` kept)."""
        if flag in self._by_opt:
            a = self._by_opt[flag]
            longs = [o for o in a["options"] if o.startswith("--")]
            return flag if flag.startswith("--") else (longs[0] if longs else flag)
        return cmdline.norm(flag) if flag.startswith("-") else flag  # as manage.spec.normalize_flag

    def known(self, flag: str) -> bool:
        return self.canonical(flag) in self._by_opt

    def takes_value(self, flag: str) -> bool:
        a = self._by_opt.get(self.canonical(flag))
        return bool(a and a["takes_value"])

    def is_list(self, flag: str) -> bool:
        a = self._by_opt.get(self.canonical(flag))
        return bool(a and a["takes_value"] and a["nargs"] in ("+", "*"))

    def max_values(self, flag: str) -> int | None:
        """How many values the flag takes at most: 0 for a switch, None for no limit or unknown."""
        a = self._by_opt.get(self.canonical(flag))
        if a is None:
            return None
        if not a["takes_value"]:
            return 0
        n = a["nargs"]
        if n in ("+", "*"):
            return None
        return n if isinstance(n, int) else 1

    def check_many(self, argvs: Sequence[Sequence[str]]) -> list[str | None]:
        """Parse each argv (model and flags, no program) with vLLM's own parser, in one process.

        Returns, per argv, None when vLLM accepts it, else vLLM's error message.
        """
        if not argvs:
            return []
        res = _run_probe(self.python, ["parse", json.dumps([list(a) for a in argvs])])
        return [None if r.get("ok") else str(r.get("error")) for r in res.get("results", [])]

    def check_argv(self, args: Sequence[str]) -> None:
        """ConfigError when the installed vLLM's parser rejects `args`."""
        err = self.check_many([args])[0]
        if err is not None:
            raise ConfigError(f"the installed vLLM {self.version} rejects {shlex.join(args)}: {err}")

    def _local_check(self, flag: str, value: Any) -> str:
        name = self.canonical(flag)
        if not self.known(name):
            raise ConfigError(f"the installed vLLM {self.version} has no flag {flag}")
        if value is True and self.takes_value(name):
            raise ConfigError(f"{name} needs a value in vLLM {self.version}")
        if value is not True and value not in (False, None) and not self.takes_value(name):
            raise ConfigError(
                f"{name} is a switch in vLLM {self.version}: it takes no value ({value!r} given)"
            )
        return name

    def validate_many(self, pairs: Sequence[tuple[str, Any]]) -> list[str | None]:
        """Check several (flag, value) pairs, in one vLLM process: None or the reason it is
        rejected, for each (an unknown flag, a value for a switch, a value vLLM's parser refuses)."""
        out: list[str | None] = [None] * len(pairs)
        todo: list[tuple[int, list[str]]] = []
        for i, (flag, value) in enumerate(pairs):
            try:
                name = self._local_check(flag, value)
                todo.append((i, ["observe-probe-model", *cmdline.render(name, value)]))
            except ConfigError as e:
                out[i] = str(e)
        for (i, argv), err in zip(todo, self.check_many([a for _, a in todo])):
            if err is not None:
                out[i] = f"the installed vLLM {self.version} rejects {shlex.join(argv[1:])}: {err}"
        return out


def installed_flags(python: str | None = None) -> VllmFlags | None:
    """The installed vLLM's flags, or None when that interpreter has no vLLM."""
    try:
        return VllmFlags.probe(python)
    except ConfigError:
        return None
