"""The vLLM instance observe manages: its exact flags, launching it, applying a change, rolling back.

Why: advice about flags is only useful when it names flags and values the installed vLLM accepts,
and when applying it is safe. So this module

- parses a launch command (`vllm serve MODEL [FLAGS]` or `python -m
  vllm.entrypoints.openai.api_server --model M [FLAGS]`) into a `LaunchSpec`, using the installed
  vLLM's own argument parser (run in vLLM's interpreter, which may be another venv) to know which
  flags take values, else a plain tokenizer;
- validates a flag and value with that same parser before a change is suggested (`validate`);
- rewrites the command with recommendations (`apply`), keeping everything else as it was;
- runs vLLM as a child process (`Launcher`): its output goes to a rotating log file and to the
  terminal, /metrics is saved to snapshots beside the log, a restart with new flags keeps the
  previous command to roll back to, and every start, change, failure and rollback is a line in a
  JSON-lines history file. A vLLM that fails to start is reported with the cause read from its
  log. Nothing is applied without the caller asking for it.

Nothing here prints: the terminal stream is passed in by the CLI.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from observe import names
from observe.errors import ConfigError, ObserveError
from observe.model import Recommendation

API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"
CLI_MODULE = "vllm.entrypoints.cli.main"
DEFAULT_PORT = 8000


class LaunchError(ObserveError):
    """vLLM did not start (or stopped): the message carries the cause read from its log."""

    exit_code = 4


class RolledBack(LaunchError):
    """The changed command failed to start; the previous command runs again."""


# ---------------------------------------------------------------- the command line


@dataclass(frozen=True)
class LaunchSpec:
    """A vLLM launch command, split into the program part, the model and the flags (in order).

    `flags` maps the flag as written on the command line (`--max-num-seqs`) to its value: a
    string, `True` for a bare switch, or a list of strings for a multi-value flag.
    """

    program: tuple[str, ...]  # e.g. ("vllm", "serve") or ("python", "-m", API_SERVER_MODULE)
    form: str  # "serve" (positional model) or "api_server" (--model)
    model: str | None
    flags: dict[str, Any] = field(default_factory=dict)

    @property
    def argv(self) -> list[str]:
        """The whole command as a list, ready for subprocess."""
        out = list(self.program)
        if self.model is not None:
            out.extend([self.model] if self.form == "serve" else ["--model", self.model])
        for flag, value in self.flags.items():
            out.extend(_render(flag, value))
        return out

    def command(self) -> str:
        """The command as one shell line to paste."""
        return shlex.join(self.argv)

    def get(self, flag: str, default: Any = None) -> Any:
        return self.flags.get(_norm(flag), default)

    @property
    def host(self) -> str:
        """Where to reach it from this machine (vLLM's default binds every interface)."""
        h = self.get("--host")
        return "127.0.0.1" if h in (None, True, "", "0.0.0.0", "::") else str(h)

    @property
    def port(self) -> int:
        try:
            return int(self.get("--port", DEFAULT_PORT))
        except (TypeError, ValueError):
            raise ConfigError(f"--port is not a number: {self.get('--port')!r}")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def python(self) -> str | None:
        """The interpreter that runs this vLLM, when the command names one (or a `vllm` script)."""
        return _interpreter_of(self.program)


def _norm(flag: str) -> str:
    """`--max_num_seqs` and `--max-num-seqs` are the same flag to vLLM's parser."""
    if flag.startswith("--"):
        return "--" + flag[2:].replace("_", "-")
    return flag


def _render(flag: str, value: Any) -> list[str]:
    if value is True:
        return [flag]
    if value is False or value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [flag, *map(str, value)]
    return [flag, _fmt_value(value)]


def _fmt_value(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1:
        return str(int(value))
    return str(value)


def _is_python(word: str) -> bool:
    name = Path(word).name
    return name.startswith("python") or name == "py"


def _interpreter_of(program: Sequence[str]) -> str | None:
    if not program:
        return None
    first = program[0]
    if _is_python(first):
        return first
    if Path(first).name == "vllm":
        path = Path(first) if os.sep in first else _which(first)
        if path is not None:
            try:
                line = path.read_bytes()[:256].split(b"\n", 1)[0].decode("utf-8", "replace")
            except OSError:
                return None
            if line.startswith("#!"):
                cand = line[2:].strip().split()[0] if line[2:].strip() else ""
                return cand if cand and _is_python(cand) else None
    return None


def _which(name: str) -> Path | None:
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


def _split_program(argv: Sequence[str]) -> tuple[tuple[str, ...], str, list[str]]:
    """Find where the program ends and the arguments begin; raise ConfigError if it is not vLLM."""
    argv = list(argv)
    if not argv:
        raise ConfigError("no command given: expected `vllm serve MODEL [FLAGS]`")
    if Path(argv[0]).name == "vllm":
        if len(argv) < 2 or argv[1] != "serve":
            raise ConfigError(f"only `vllm serve` is supported, got: {shlex.join(argv[:3])}")
        return (argv[0], "serve"), "serve", argv[2:]
    if _is_python(argv[0]):
        i = 1
        while i < len(argv) and argv[i].startswith("-") and argv[i] != "-m":
            i += 1  # interpreter options such as -u or -X
        if i + 1 < len(argv) and argv[i] == "-m":
            mod = argv[i + 1]
            if mod == API_SERVER_MODULE:
                return tuple(argv[: i + 2]), "api_server", argv[i + 2 :]
            if mod in (CLI_MODULE, "vllm") and i + 2 < len(argv) and argv[i + 2] == "serve":
                return tuple(argv[: i + 3]), "serve", argv[i + 3 :]
    raise ConfigError(
        "not a vLLM launch command: expected `vllm serve MODEL [FLAGS]` or "
        f"`python -m {API_SERVER_MODULE} --model MODEL [FLAGS]`, got: {shlex.join(argv[:4])}"
    )


def parse_command(argv: Sequence[str], *, flags: VllmFlags | None = None) -> LaunchSpec:
    """Split a vLLM launch command into a LaunchSpec.

    With `flags` (the installed vLLM's own parser, see VllmFlags) each flag is known to take a
    value or not, and unknown flags are rejected as vLLM would; without it a plain tokenizer
    reads `--flag value`, `--flag=value`, bare `--switch` and multi-value flags.
    """
    program, form, rest = _split_program(argv)
    model: str | None = None
    out: dict[str, Any] = {}
    i = 0
    while i < len(rest):
        tok = rest[i]
        if tok == "--":
            i += 1
            continue
        if not tok.startswith("-") or _is_number(tok):
            if form == "serve" and model is None:
                model = tok
                i += 1
                continue
            raise ConfigError(f"unexpected argument {tok!r} in the vLLM command")
        name, eq, inline = tok.partition("=")
        name = flags.canonical(name) if flags is not None else _norm(name)
        if flags is not None and not flags.known(name):
            raise ConfigError(f"the installed vLLM {flags.version} has no flag {name}")
        i += 1
        if eq:
            value: Any = inline
        else:
            values: list[str] = []
            limit = flags.max_values(name) if flags is not None else None
            while i < len(rest) and (not rest[i].startswith("-") or _is_number(rest[i])):
                if limit is not None and len(values) >= limit:
                    break
                if form == "serve" and model is None and flags is None and values:
                    break
                values.append(rest[i])
                i += 1
            if flags is None and form == "serve" and model is None and len(values) == 1 and _looks_bare(name):
                model = values.pop()
            value = (
                True
                if not values
                else values[0]
                if len(values) == 1 and not (flags is not None and flags.is_list(name))
                else values
            )
        if name == "--model":
            if not isinstance(value, str):
                raise ConfigError("--model needs one value")
            model = value
            continue
        out[name] = value
    if model is None:
        raise ConfigError("the vLLM command names no model (`vllm serve MODEL` or `--model MODEL`)")
    return LaunchSpec(program=program, form=form, model=model, flags=out)


_BARE_HINTS = (
    "--enforce-eager",
    "--trust-remote-code",
    "--enable-prefix-caching",
    "--no-enable-prefix-caching",
    "--disable-log-stats",
    "--enable-log-requests",
    "--enable-chunked-prefill",
    "--disable-log-requests",
    "--enable-auto-tool-choice",
    "--headless",
)


def _looks_bare(flag: str) -> bool:
    return (
        flag in _BARE_HINTS
        or flag.startswith("--no-")
        or flag.startswith("--enable-")
        or flag.startswith("--disable-")
    )


def _is_number(tok: str) -> bool:
    try:
        float(tok)
        return True
    except ValueError:
        return False


# ---------------------------------------------------------------- the installed vLLM's own parser

# Run in vLLM's interpreter: describe the serve parser, or parse one argv with it (and the quick
# serve checks vLLM itself runs before loading a model). Prints one JSON line after a marker.
_PROBE = r"""
import json, sys, os, argparse
os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
MARK = "@@observe-probe@@"
def out(obj):
    sys.stdout.write(MARK + json.dumps(obj, default=str) + "\n"); sys.stdout.flush()
try:
    try:
        from vllm.entrypoints.launchers.cli_args import make_arg_parser, validate_parsed_serve_args
    except ImportError:
        from vllm.entrypoints.openai.cli_args import make_arg_parser, validate_parsed_serve_args
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser
    except ImportError:
        from vllm.utils import FlexibleArgumentParser
    import vllm
    version = getattr(vllm, "__version__", None)
except Exception as e:
    out({"error": "cannot import vLLM's argument parser: %s: %s" % (type(e).__name__, e)}); sys.exit(0)
class Bad(Exception):
    pass
parser = make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
def _error(message):
    raise Bad(message)
parser.error = _error
mode = sys.argv[1]
if mode == "describe":
    acts = []
    for a in parser._actions:
        if not a.option_strings:
            continue
        nargs = a.nargs
        takes = not (nargs == 0 or isinstance(a, (argparse._StoreTrueAction, argparse._StoreFalseAction,
                     argparse._StoreConstAction, argparse._HelpAction, argparse._VersionAction)))
        if isinstance(a, argparse.BooleanOptionalAction):
            takes = False
        acts.append({"options": list(a.option_strings), "dest": a.dest, "nargs": nargs if isinstance(nargs, (int, str)) or nargs is None else str(nargs),
                     "takes_value": takes, "choices": [str(c) for c in a.choices] if a.choices else None,
                     "type": getattr(a.type, "__name__", None) if a.type else None})
    out({"version": version, "actions": acts})
else:
    results = []
    for argv in json.loads(sys.argv[2]):
        try:
            ns = parser.parse_args(argv)
            validate_parsed_serve_args(ns)
            results.append({"ok": True})
        except (Bad, ValueError, TypeError) as e:
            results.append({"ok": False, "error": str(e)})
    out({"version": version, "ok": True, "results": results})
"""
_MARK = "@@observe-probe@@"
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
            [python, "-c", _PROBE, *args], capture_output=True, text=True, timeout=timeout, env=_probe_env()
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ConfigError(f"cannot ask the installed vLLM ({python}) about its flags: {e}")
    for line in cp.stdout.splitlines():
        if line.startswith(_MARK):
            res = json.loads(line[len(_MARK) :])
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
        return _norm(flag)

    def known(self, flag: str) -> bool:
        return self.canonical(flag) in self._by_opt

    def takes_value(self, flag: str) -> bool:
        a = self._by_opt.get(self.canonical(flag))
        return bool(a and a["takes_value"])

    def choices(self, flag: str) -> list[str] | None:
        a = self._by_opt.get(self.canonical(flag))
        return a["choices"] if a else None

    def is_list(self, flag: str) -> bool:
        a = self._by_opt.get(self.canonical(flag))
        return bool(a and a["takes_value"] and a["nargs"] in ("+", "*"))

    def max_values(self, flag: str) -> int | None:
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

    def validate(self, flag: str, value: Any) -> None:
        """Reject what the installed vLLM rejects: an unknown flag or a value its parser refuses."""
        name = self._local_check(flag, value)
        self.check_argv(["observe-probe-model", *_render(name, value)])

    def validate_many(self, pairs: Sequence[tuple[str, Any]]) -> list[str | None]:
        """validate() for several (flag, value) pairs in one vLLM process: None or the reason, each."""
        out: list[str | None] = [None] * len(pairs)
        todo: list[tuple[int, list[str]]] = []
        for i, (flag, value) in enumerate(pairs):
            try:
                name = self._local_check(flag, value)
                todo.append((i, ["observe-probe-model", *_render(name, value)]))
            except ConfigError as e:
                out[i] = str(e)
        for (i, argv), err in zip(todo, self.check_many([a for _, a in todo])):
            if err is not None:
                out[i] = f"the installed vLLM {self.version} rejects {shlex.join(argv[1:])}: {err}"
        return out


def validate(flag: str, value: Any, *, python: str | None = None) -> None:
    """Validate one flag and value against the vLLM installed for `python` (ConfigError if rejected)."""
    VllmFlags.probe(python).validate(flag, value)


def installed_flags(python: str | None = None) -> VllmFlags | None:
    """The installed vLLM's flags, or None when that interpreter has no vLLM."""
    try:
        return VllmFlags.probe(python)
    except ConfigError:
        return None


# ---------------------------------------------------------------- applying recommendations


def apply(spec: LaunchSpec, recommendations: Iterable[Recommendation]) -> LaunchSpec:
    """The same command with each recommended flag set to its suggested value (added if absent).

    `suggested` True adds a bare switch, False or None removes the flag. The model, the program
    and every other flag stay as they were, in their order.
    """
    flags = dict(spec.flags)
    for rec in recommendations:
        name = _norm(rec.flag)
        if rec.suggested is False or rec.suggested is None:
            flags.pop(name, None)
        else:
            flags[name] = rec.suggested
    return LaunchSpec(program=spec.program, form=spec.form, model=spec.model, flags=flags)


def checked_recommendations(
    spec: LaunchSpec, recs: Sequence[Recommendation], flags: VllmFlags | None
) -> tuple[list[Recommendation], list[tuple[Recommendation, str]]]:
    """Split recommendations into those the installed vLLM accepts and those it rejects (with why).

    Without `flags` (no vLLM to ask) every recommendation is passed through unchecked.
    """
    if flags is None:
        return list(recs), []
    ok: list[Recommendation] = []
    bad: list[tuple[Recommendation, str]] = []
    for r, err in zip(recs, flags.validate_many([(r.flag, r.suggested) for r in recs])):
        if err is None:
            ok.append(r)
        else:
            bad.append((r, err))
    return ok, bad


def flag_diff(before: LaunchSpec, after: LaunchSpec) -> list[tuple[str, Any, Any]]:
    """(flag, old, new) for every flag that differs; None means absent."""
    keys = list(before.flags) + [k for k in after.flags if k not in before.flags]
    return [
        (k, before.flags.get(k), after.flags.get(k))
        for k in keys
        if before.flags.get(k) != after.flags.get(k)
    ]


# ---------------------------------------------------------------- why a launch failed


def failure_cause(log_text: str, *, source: str = "vllm.log") -> str:
    """The cause of a failed start or a crash, read from vLLM's log, as one sentence.

    Uses the log parser's EngineError events (kind, message, details such as the largest
    max-model-len that fits); falls back to the last error-looking line.
    """
    try:
        from observe import parse

        events = parse.parse_text(log_text, source)
    except Exception:
        events = []
    from observe.model import EngineError

    errors = [
        e for e in events if isinstance(e, EngineError) and e.kind not in ("shutdown_noise", "exception")
    ]
    if not errors:
        for needle, what in _CRASH_HINTS:
            line = next((ln for ln in reversed(log_text.splitlines()) if needle in ln), None)
            if line is not None:
                return f"{what}: {_clip(line.split('] ', 1)[-1].strip())}"
    if errors:
        best = max(
            errors,
            key=lambda e: (
                e.kind not in ("engine_core_failed", "startup_failed", "worker_exception"),
                e.fatal,
            ),
        )
        msg = f"{best.kind}: {_clip(best.message)}"
        fits = _details_max_len(best.details)
        if fits is not None:
            msg += f" (the largest --max-model-len that fits: {fits})"
        return msg
    return _last_error_line(log_text)


# log lines that say why vLLM went away when the parser found no error event (a killed engine, the OOM killer)
_CRASH_HINTS = (
    ("engine core exited unexpectedly", "the EngineCore process died"),
    ("EngineDeadError", "the EngineCore process died"),
    ("Killed", "the process was killed (out of memory?)"),
)


def _details_max_len(details: dict[str, Any]) -> int | None:
    for key in ("max_model_len_that_fits", "estimated_max_model_len", "estimated_max_len", "max_len_fits"):
        v = details.get(key)
        if isinstance(v, (int, float)):
            return int(v)
    return None


def _last_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    keys = ("Error:", "ValueError", "RuntimeError", "Exception", "ERROR", "error:")
    for ln in reversed(lines):
        if any(k in ln for k in keys) and "Traceback" not in ln:
            return _clip(ln)
    return _clip(lines[-1]) if lines else "no output"


def _clip(s: str, n: int = 400) -> str:
    s = "".join(ch if ch.isprintable() else "?" for ch in s)
    return s if len(s) <= n else s[: n - 1] + "…"


# ---------------------------------------------------------------- the rotating tee


class RotatingTee:
    """Write bytes line by line to a size-rotated log file (like RotatingFileHandler) and a stream.

    `vllm.log` rotates to `vllm.log.1` … `vllm.log.<backups>` by rename, so observe's own
    follower and `observe diagnose` read it as any rotated vLLM log.
    """

    def __init__(
        self, path: Path, *, max_bytes: int = 10 * 2**20, backups: int = 5, echo: IO[str] | None = None
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self.echo = echo
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "ab")
        self._lock = threading.Lock()

    def write_line(self, line: bytes) -> None:
        with self._lock:
            if self.max_bytes and self._fh.tell() + len(line) > self.max_bytes and self._fh.tell() > 0:
                self._rotate()
            self._fh.write(line)
            self._fh.flush()
        if self.echo is not None:
            try:
                self.echo.write(line.decode("utf-8", "replace"))
                self.echo.flush()
            except (OSError, ValueError):
                self.echo = None  # a closed terminal must not stop the log

    def _rotate(self) -> None:
        self._fh.close()
        for i in range(self.backups - 1, 0, -1):
            src = self.path.with_name(f"{self.path.name}.{i}")
            if src.exists():
                os.replace(src, self.path.with_name(f"{self.path.name}.{i + 1}"))
        if self.backups > 0:
            os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))
        else:
            self.path.unlink()
        self._fh = open(self.path, "ab")

    def pump(self, stream: IO[bytes]) -> None:
        """Copy `stream` until EOF (run in a thread)."""
        for line in iter(stream.readline, b""):
            self.write_line(line)
        self.close()

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()


def read_log(path: Path) -> str:
    """A rotated log's whole text, oldest part first."""
    parts = sorted(
        path.parent.glob(path.name + ".*"), key=lambda p: -int(p.suffix[1:]) if p.suffix[1:].isdigit() else 0
    )
    text = []
    for p in [*parts, path]:
        try:
            text.append(p.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            pass
    return "".join(text)


# ---------------------------------------------------------------- history


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def record(history: Path, event: str, **fields: Any) -> dict[str, Any]:
    """Append one JSON line {at, event, ...} to the history file; return it."""
    entry = {"at": _now_iso(), "event": event, **fields}
    history.parent.mkdir(parents=True, exist_ok=True)
    with open(history, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, default=str) + "\n")
    return entry


def read_history(history: Path) -> list[dict[str, Any]]:
    if not history.exists():
        return []
    out = []
    for line in history.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


# ---------------------------------------------------------------- the launcher


def save_metrics(url: str, path: Path, *, note: str = "", timeout: float = 5.0) -> Path:
    """GET <url>/metrics and save it with a `# scraped_at <ISO>` first line."""
    with urllib.request.urlopen(url.rstrip("/") + "/metrics", timeout=timeout) as r:
        body = r.read().decode("utf-8", "replace")
    path.write_text(f"# scraped_at {_now_iso()}{(' ' + note) if note else ''}\n{body}", encoding="utf-8")
    return path


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/health", timeout=2) as r:
            return r.status == 200
    except (OSError, ValueError):
        return False


class Launcher:
    """Run one vLLM at a time as a child process, each launch in its own folder under `run_dir`.

    `run_dir/NNN/vllm.log` (rotating) and `run_dir/NNN/metrics-K.txt` (snapshots) hold what each
    launch printed and exposed, so `observe diagnose run_dir/NNN` and `observe compare
    run_dir/001 run_dir/002` work on them; `run_dir/history.jsonl` records each step.
    """

    def __init__(
        self,
        spec: LaunchSpec,
        run_dir: Path,
        *,
        env: dict[str, str] | None = None,
        echo: IO[str] | None = None,
        log_max_bytes: int = 10 * 2**20,
        log_backups: int = 5,
        sidecar_factory: Callable[[LaunchSpec, Path], Any] | None = None,
    ) -> None:
        self.spec = spec
        self.previous: LaunchSpec | None = None
        self.run_dir = run_dir
        self.env = env
        self.echo = echo
        self.log_max_bytes = log_max_bytes
        self.log_backups = log_backups
        self.sidecar_factory = sidecar_factory
        self.sidecar: Any = None
        self.sidecar_error: str | None = None
        self.proc: subprocess.Popen | None = None
        self.launch_dir: Path | None = None
        self._tee: RotatingTee | None = None
        self._pump: threading.Thread | None = None
        self._snap = 0
        run_dir.mkdir(parents=True, exist_ok=True)

    @property
    def history(self) -> Path:
        return self.run_dir / "history.jsonl"

    @property
    def log_path(self) -> Path:
        assert self.launch_dir is not None
        return self.launch_dir / "vllm.log"

    def _next_dir(self) -> Path:
        n = 1 + max(
            (int(p.name) for p in self.run_dir.iterdir() if p.is_dir() and p.name.isdigit()), default=0
        )
        d = self.run_dir / f"{n:03d}"
        d.mkdir()
        return d

    def start(self, *, timeout: float = 600.0) -> None:
        """Start vLLM and wait for /health; LaunchError with the cause from the log if it fails."""
        self.launch_dir = self._next_dir()  # only vLLM's log and snapshots go here: `diagnose` reads it all
        self._tee = RotatingTee(
            self.log_path, max_bytes=self.log_max_bytes, backups=self.log_backups, echo=self.echo
        )
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        try:
            self.proc = subprocess.Popen(
                self.spec.argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        except OSError as e:
            self._tee.close()
            record(self.history, "failed", argv=self.spec.argv, dir=str(self.launch_dir), cause=str(e))
            raise LaunchError(f"cannot start {self.spec.program[0]}: {e.strerror or e}")
        self._pump = threading.Thread(target=self._tee.pump, args=(self.proc.stdout,), daemon=True)
        self._pump.start()
        record(self.history, "start", argv=self.spec.argv, dir=str(self.launch_dir), pid=self.proc.pid)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._pump.join(timeout=10)
                cause = failure_cause(read_log(self.log_path), source=str(self.log_path))
                record(
                    self.history,
                    "failed",
                    argv=self.spec.argv,
                    dir=str(self.launch_dir),
                    rc=self.proc.returncode,
                    cause=cause,
                )
                raise LaunchError(
                    f"vLLM failed to start (exit code {self.proc.returncode}): {cause}; log: {self.log_path}"
                )
            if _healthy(self.spec.url):
                record(self.history, "ready", argv=self.spec.argv, dir=str(self.launch_dir))
                self._start_sidecar()
                return
            time.sleep(1.0)
        self.stop()
        cause = failure_cause(read_log(self.log_path))
        record(
            self.history, "failed", argv=self.spec.argv, dir=str(self.launch_dir), cause=f"timeout; {cause}"
        )
        raise LaunchError(f"vLLM did not answer {self.spec.url}/health within {timeout:.0f} s; last: {cause}")

    def _start_sidecar(self) -> None:
        if self.sidecar_factory is None:
            return
        try:
            self.sidecar = self.sidecar_factory(self.spec, self.log_path)
            if self.sidecar is not None:
                self.sidecar.start()
            self.sidecar_error = None
        except (OSError, ObserveError) as e:  # e.g. its port is taken: vLLM keeps running without it
            self.sidecar = None
            self.sidecar_error = f"sidecar not started: {e}"
            record(self.history, "sidecar_failed", dir=str(self.launch_dir), cause=str(e))

    def _stop_sidecar(self) -> None:
        if self.sidecar is not None:
            try:
                self.sidecar.stop()
            finally:
                self.sidecar = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def check(self) -> None:
        """LaunchError with the cause from the log when vLLM has exited on its own (a crash)."""
        if self.proc is not None and self.proc.poll() is not None:
            rc = self.proc.returncode
            if self._pump is not None:
                self._pump.join(timeout=10)
            cause = failure_cause(read_log(self.log_path))
            record(self.history, "crash", argv=self.spec.argv, dir=str(self.launch_dir), rc=rc, cause=cause)
            self.proc = None
            self._stop_sidecar()
            raise LaunchError(f"vLLM stopped unexpectedly (exit code {rc}): {cause}; log: {self.log_path}")

    def snapshot(self, note: str = "") -> Path:
        """Save /metrics into this launch's folder as metrics-<k>.txt."""
        assert self.launch_dir is not None
        self._snap += 1
        return save_metrics(self.spec.url, self.launch_dir / f"metrics-{self._snap}.txt", note=note)

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM vLLM (it stops its own children), SIGKILL its group if it lingers."""
        self._stop_sidecar()
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        if self._pump is not None:
            self._pump.join(timeout=10)
        rc = self.proc.returncode
        record(self.history, "stop", argv=self.spec.argv, dir=str(self.launch_dir), rc=rc)
        self.proc = None
        self._snap = 0
        return rc

    def restart(
        self, new: LaunchSpec, *, recommendations: Sequence[Recommendation] = (), timeout: float = 600.0
    ) -> None:
        """Stop, start `new`; if it fails, start the previous command again and raise LaunchError.

        The caller asks the user first: this method applies what it is given.
        """
        old = self.spec
        before_dir = self.launch_dir
        self.stop()
        record(
            self.history,
            "apply",
            before=old.argv,
            after=new.argv,
            before_dir=str(before_dir),
            changes=[{"flag": f, "from": a, "to": b} for f, a, b in flag_diff(old, new)],
            recommendations=[
                {"flag": r.flag, "current": r.current, "suggested": r.suggested, "reason": r.reason}
                for r in recommendations
            ],
        )
        self.previous, self.spec = old, new
        try:
            self.start(timeout=timeout)
        except LaunchError as e:
            self.spec, self.previous = old, None
            record(self.history, "rollback", argv=old.argv, cause=str(e))
            try:
                self.start(timeout=timeout)
            except LaunchError as e2:
                raise LaunchError(f"{e}; rolling back to the previous command failed too: {e2}")
            raise RolledBack(f"{e}; rolled back to the previous command: {old.command()}")

    def rollback(self, *, timeout: float = 600.0) -> None:
        """Go back to the command before the last applied change."""
        if self.previous is None:
            raise ConfigError("nothing to roll back to: no change has been applied")
        prev = self.previous
        self.stop()
        record(self.history, "rollback", argv=prev.argv, from_argv=self.spec.argv)
        self.spec, self.previous = prev, None
        self.start(timeout=timeout)


# ---------------------------------------------------------------- before / after


_QUANTILES = names.LATENCY_QUANTILES
_HISTS = names.LATENCY_HISTOGRAMS


def diagnosis_summary(path: Path) -> dict[str, Any]:
    """The same summary from a saved diagnosis: `observe diagnose --format json` or the sidecar's
    `/api/diagnosis` (one window of its history). Its numbers cover that window only."""
    import json

    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{path}: neither a run folder nor a saved diagnosis JSON ({e})") from None
    if not isinstance(d, dict) or d.get("schema") != "observe.diagnosis/v1":
        raise ConfigError(f"{path}: not an observe diagnosis (expected schema observe.diagnosis/v1)")
    stats, events, engine = d.get("stats") or {}, d.get("events") or {}, d.get("engine") or {}
    m = stats.get("metrics") or {}
    out: dict[str, Any] = {
        "folder": str(path),
        "flags": dict(engine.get("flags") or {}),
        "snapshots": m.get("scrapes", 0),
        "findings": [f.get("id") for f in d.get("findings", [])],
    }
    out["log_generation_tps_mean"] = stats.get("mean_generation_throughput")
    out["log_max_kv_usage_pct"] = stats.get("max_kv_cache_usage_pct")
    out["log_max_waiting"] = stats.get("max_waiting")
    out["log_max_running"] = stats.get("max_running")
    out["generation_tps"] = m.get("generation_tps")
    pre = m.get("preemptions")
    out["preemptions"] = pre if pre is not None else events.get("cumulative_preemptions")
    out["kv_usage_max_pct"] = m.get("kv_usage_max_pct")
    out["requests_finished"] = m.get("requests_finished")
    for key in _HISTS:
        for q in _QUANTILES:
            k = f"{key}_p{int(q * 100)}_s"
            out[k] = m.get(k)
    return out


def run_summary(folder: Path) -> dict[str, Any]:
    """What one launch folder (a vLLM log + /metrics snapshots) says about throughput, latency, KV.

    Throughput comes from `vllm:generation_tokens_total` between the first and last snapshot and,
    for logs without snapshots, from the mean of the stats lines while requests ran. Latency
    quantiles come from the last snapshot's histograms (everything since vLLM started).
    """
    from observe import metricmath as mm
    from observe import pipeline

    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(
            f"{folder} is not a folder (give the folder of one run: a vLLM log and its snapshots)"
        )
    diag = pipeline.diagnose_paths([folder])
    if not diag.instances:
        raise ConfigError(f"{folder}: no vLLM instance found")
    inst = diag.instances[0]
    snaps = [pipeline.read_snapshot(p) for p in sorted(folder.glob("metrics-*.txt"), key=_natural)]
    snaps = sorted((s for s in snaps if s.samples), key=lambda s: s.at.timestamp() if s.at else 0.0)  # stable
    out: dict[str, Any] = {
        "folder": str(folder),
        "flags": dict(inst.config.flags),
        "snapshots": len(snaps),
        "findings": [f.id for f in inst.findings],
    }
    stats = inst.stats or {}
    out["log_generation_tps_mean"] = stats.get("mean_generation_throughput")
    out["log_max_kv_usage_pct"] = stats.get("max_kv_cache_usage_pct")
    out["log_max_waiting"] = stats.get("max_waiting")
    out["log_max_running"] = stats.get("max_running")
    gen_tps = None
    if len(snaps) >= 2 and snaps[0].at and snaps[-1].at:
        pts = [(s.at, mm.value(s, "vllm:generation_tokens_total") or 0.0) for s in snaps]
        gen_tps = mm.rate(pts)
    out["generation_tps"] = round(gen_tps, 1) if gen_tps is not None else None
    last = snaps[-1] if snaps else None
    pre = None
    if snaps:
        vals = [mm.value(s, "vllm:num_preemptions_total") for s in snaps]
        vals = [v for v in vals if v is not None]
        pre = mm.counter_increase([0.0, *vals]) if vals else None
    out["preemptions"] = int(pre) if pre is not None else (inst.events or {}).get("cumulative_preemptions")
    out["kv_usage_max_pct"] = None
    if snaps:
        kv = [mm.value(s, "vllm:kv_cache_usage_perc", agg="max") for s in snaps]
        kv = [v for v in kv if v is not None]
        out["kv_usage_max_pct"] = round(100 * max(kv), 1) if kv else None
    for key, fam in _HISTS.items():
        b = mm.buckets(last, fam) if last is not None else []
        for q in _QUANTILES:
            v = mm.histogram_quantile(q, b) if b else None
            out[f"{key}_p{int(q * 100)}_s"] = round(v, 4) if v is not None else None
    if last is not None:
        done = mm.value(last, "vllm:request_success_total")
        out["requests_finished"] = int(done) if done is not None else None
    return out


def _natural(p: Path) -> tuple:
    """metrics-kv-2.txt before metrics-kv-10.txt (snapshots stamped in the same second keep their order)."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name))


def compare_runs(before: Path, after: Path, *, max_throughput_drop: float = 0.10) -> dict[str, Any]:
    """Side by side summaries of two launch folders and whether the change helped.

    Helped: preemptions fell (or stayed at zero) and generation throughput fell by no more than
    `max_throughput_drop`. Unknown (None) when neither preemptions nor throughput can be read.
    """

    def summary(p: Path) -> dict[str, Any]:
        p = Path(p)
        if not p.exists():
            raise ConfigError(f"no such folder or file: {p}")
        return diagnosis_summary(p) if p.is_file() else run_summary(p)

    b, a = summary(before), summary(after)
    reasons: list[str] = []
    verdict: bool | None = None
    pb, pa = b.get("preemptions"), a.get("preemptions")
    tb = b.get("generation_tps") or b.get("log_generation_tps_mean")
    ta = a.get("generation_tps") or a.get("log_generation_tps_mean")
    checks: list[bool] = []
    if pb is not None and pa is not None:
        fell = pa < pb or pa == pb == 0
        checks.append(fell)
        drop = (1 - pa / pb) if pb else 0.0
        reasons.append(f"preemptions {pb} → {pa}" + (f" ({drop:.0%} fewer)" if pb else ""))
    if tb and ta:
        change = ta / tb - 1
        checks.append(change >= -max_throughput_drop)
        reasons.append(f"generation throughput {tb:,.0f} → {ta:,.0f} tokens/s ({change:+.0%})")
    if checks:
        verdict = all(checks)
    keys = [
        "generation_tps",
        "log_generation_tps_mean",
        "preemptions",
        "kv_usage_max_pct",
        "log_max_kv_usage_pct",
        "log_max_running",
        "log_max_waiting",
        "requests_finished",
        *[f"{k}_p{int(q * 100)}_s" for k in _HISTS for q in _QUANTILES],
    ]
    return {
        "before": b,
        "after": a,
        "rows": [{"metric": k, "before": b.get(k), "after": a.get(k)} for k in keys],
        "flag_changes": [
            {"flag": k, "before": b["flags"].get(k), "after": a["flags"].get(k)}
            for k in sorted(set(b["flags"]) | set(a["flags"]))
            if b["flags"].get(k) != a["flags"].get(k) and k not in ("--port",)
        ],
        "helped": verdict,
        "reasons": reasons,
    }


# ---------------------------------------------------------------- watch, propose, apply


@dataclass
class Proposal:
    """What observe would change for the running launch, checked against the installed vLLM."""

    before: LaunchSpec
    after: LaunchSpec
    accepted: list[Recommendation]
    rejected: list[tuple[Recommendation, str]]
    findings: list[Any]
    folder: Path

    @property
    def changes(self) -> list[tuple[str, Any, Any]]:
        return flag_diff(self.before, self.after)


def propose(spec: LaunchSpec, folder: Path, flags: VllmFlags | None) -> Proposal:
    """Diagnose one launch folder (log + snapshots) and turn its recommendations into a new command."""
    from observe import pipeline

    diag = pipeline.diagnose_paths([folder])
    inst = max(diag.instances, key=lambda i: sum(s.get("parsed_lines") or 0 for s in i.sources), default=None)
    recs = list(inst.recommendations) if inst else []
    ok, bad = checked_recommendations(spec, recs, flags)
    return Proposal(
        before=spec,
        after=apply(spec, ok),
        accepted=ok,
        rejected=bad,
        findings=list(inst.findings) if inst else [],
        folder=folder,
    )


def supervise(
    launcher: Launcher,
    *,
    stop: threading.Event,
    notify: Callable[[str], None],
    decide: Callable[[Proposal], bool],
    flags: VllmFlags | None = None,
    snapshot_every: float = 30.0,
    recommend_after: float = 0.0,
    max_changes: int = 1,
    trigger: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
    tick: float = 1.0,
) -> None:
    """Watch a started launcher until `stop` is set: snapshots, one proposal per launch (after
    `recommend_after` seconds, or whenever `trigger` is set), applying it only when `decide` says
    yes. A crash ends the loop with LaunchError (the cause from the log).
    """
    changes = 0
    t0 = clock()
    next_snap = t0 + snapshot_every if snapshot_every > 0 else None
    proposed = False
    while not stop.wait(tick):
        launcher.check()
        now = clock()
        if next_snap is not None and now >= next_snap:
            next_snap = now + snapshot_every
            try:
                launcher.snapshot()
            except (OSError, ValueError) as e:
                notify(f"cannot save /metrics: {e}")
        asked = trigger is not None and trigger.is_set()
        if asked or (recommend_after > 0 and not proposed and now - t0 >= recommend_after):
            if trigger is not None:
                trigger.clear()
            proposed = True
            try:
                launcher.snapshot("before_recommendation")
            except (OSError, ValueError) as e:
                notify(f"cannot save /metrics: {e}")
            prop = propose(launcher.spec, launcher.launch_dir, flags)
            record(
                launcher.history,
                "recommend",
                argv=launcher.spec.argv,
                dir=str(launcher.launch_dir),
                findings=[getattr(f, "id", str(f)) for f in prop.findings],
                suggested=prop.after.argv if prop.accepted else None,
                rejected=[{"flag": r.flag, "suggested": r.suggested, "why": why} for r, why in prop.rejected],
            )
            if prop.accepted and changes < max_changes and decide(prop):
                changes += 1
                try:
                    launcher.restart(prop.after, recommendations=prop.accepted)
                except RolledBack as e:
                    notify(str(e))
                    continue
                t0 = clock()
                next_snap = t0 + snapshot_every if snapshot_every > 0 else None
                proposed = False
