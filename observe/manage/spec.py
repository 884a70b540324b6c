"""A vLLM launch command: `vllm serve MODEL [FLAGS]` or `python -m
vllm.entrypoints.openai.api_server --model M [FLAGS]`, split into program, model and flags.

With the installed vLLM's flags (`VllmFlags`) each flag is known to take a value or not; without
them a plain tokenizer reads `--flag value`, `--flag=value`, bare `--switch` and multi-value flags.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from observe.errors import ConfigError
from observe.flags import cmdline

if TYPE_CHECKING:
    from observe.flags.installed import VllmFlags

API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"
CLI_MODULE = "vllm.entrypoints.cli.main"
DEFAULT_PORT = 8000


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
            out.extend(render_flag(flag, value))
        return out

    def command(self) -> str:
        """The command as one shell line to paste."""
        return shlex.join(self.argv)

    def get(self, flag: str, default: Any = None) -> Any:
        return self.flags.get(normalize_flag(flag), default)

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
            raise ConfigError(f"--port is not a number: {self.get('--port')!r}") from None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def python(self) -> str | None:
        """The interpreter that runs this vLLM, when the command names one (or a `vllm` script)."""
        return interpreter_of(self.program)


def normalize_flag(flag: str) -> str:
    """`--max_num_seqs`, `--max-num-seqs` and `-tp` → one spelling (observe.flags.cmdline.norm)."""
    return cmdline.norm(flag) if flag.startswith("-") else flag


def render_flag(flag: str, value: Any) -> list[str]:
    """The command-line words for one flag (observe.flags.cmdline.render): False is `--no-X`."""
    return cmdline.render(flag, value)


def _is_python(word: str) -> bool:
    name = Path(word).name
    return name.startswith("python") or name == "py"


def interpreter_of(program: Sequence[str]) -> str | None:
    """The python that `program` runs: named first, or the `#!` line of a `vllm` script."""
    if not program:
        return None
    first = program[0]
    if _is_python(first):
        return first
    if Path(first).name != "vllm":
        return None
    found = shutil.which(first)
    if found is None:
        return None
    try:
        line = Path(found).read_bytes()[:256].split(b"\n", 1)[0].decode("utf-8", "replace")
    except OSError:
        return None
    words = line[2:].split() if line.startswith("#!") else []
    return words[0] if words and _is_python(words[0]) else None


def split_program(argv: Sequence[str]) -> tuple[tuple[str, ...], str, list[str]]:
    """(program, form, arguments) of a vLLM command; ConfigError if it is not one."""
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
    program, form, rest = split_program(argv)
    if flags is None:  # no installed vLLM to ask: the project's one command-line reader
        model, out = cmdline.from_argv([t for t in rest if t != "--"])
        if model is None:
            raise ConfigError("the vLLM command names no model (`vllm serve MODEL` or `--model MODEL`)")
        return LaunchSpec(program=program, form=form, model=model, flags=out)
    model = None
    out = {}
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
        name = flags.canonical(name) if flags is not None else normalize_flag(name)
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


# switches the plain tokenizer knows take no value, so `vllm serve --enforce-eager MODEL` keeps MODEL
_BARE_HINTS = (
    "--enforce-eager",
    "--trust-remote-code",
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
