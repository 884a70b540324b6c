"""One error family and one table of exit codes. The CLI turns an ObserveError into one line on
stderr and its class's exit code; `EXIT_CODES` is the table the README and `observe --help` show."""

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_USAGE = 2
EXIT_TARGET = 3
EXIT_LAUNCH = 4
EXIT_INPUT = 5
EXIT_CONFIG = 6
EXIT_INTERRUPTED = 130

# (code, name, short meaning, when)
EXIT_CODES: tuple[tuple[int, str, str, str], ...] = (
    (EXIT_OK, "ok", "success", "the command did what was asked"),
    (
        EXIT_FOUND,
        "found",
        "the answer is no",
        "`diagnose --fail-on` met a finding that severe; `capacity`: the configuration does not fit "
        "(vLLM would refuse to start)",
    ),
    (
        EXIT_USAGE,
        "usage",
        "usage error",
        "unknown option or command, missing argument, a malformed or out-of-range value, unwritable --output",
    ),
    (EXIT_TARGET, "target", "server unreachable", "vLLM (or a sidecar) is down or answers something else"),
    (
        EXIT_LAUNCH,
        "launch",
        "vLLM did not start",
        "`observe run`: the launched vLLM failed; the cause is in the message",
    ),
    (
        EXIT_INPUT,
        "input",
        "bad input",
        "a path that is missing, unreadable, binary, truncated or holds no vLLM lines",
    ),
    (
        EXIT_CONFIG,
        "config",
        "unknown or impossible configuration",
        "an unknown model, GPU or --kv-cache-dtype, or flags vLLM would refuse "
        "(e.g. a tensor-parallel size that does not divide the attention heads)",
    ),
    (EXIT_INTERRUPTED, "interrupted", "interrupted", "Ctrl-C"),
)


class ObserveError(Exception):
    """A user-facing error: bad input, unreachable target, impossible configuration."""

    exit_code = EXIT_USAGE


class InputError(ObserveError):
    """A path that is missing, unreadable, binary or holds no vLLM lines."""

    exit_code = EXIT_INPUT


class ConfigError(ObserveError):
    """A flag value that makes no sense (malformed, out of range): a usage error."""


class UnknownConfig(ConfigError):
    """A well-formed value that names nothing known (model, GPU, KV dtype) or that vLLM refuses."""

    exit_code = EXIT_CONFIG


class TargetError(ObserveError):
    """A vLLM server that is down or answers garbage."""

    exit_code = EXIT_TARGET


class DoesNotFit(ConfigError):
    """The configuration asked about does not fit: a negative answer (exit 1), not a mistake."""

    exit_code = EXIT_FOUND
