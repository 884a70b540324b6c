"""One error family. The CLI turns an ObserveError into one line on stderr and an exit code."""


class ObserveError(Exception):
    """A user-facing error: bad input, unreachable target, impossible configuration."""

    exit_code = 2


class InputError(ObserveError):
    """A path that is missing, unreadable, binary or holds no vLLM lines."""


class ConfigError(ObserveError):
    """A flag value or model/GPU name that makes no sense."""


class TargetError(ObserveError):
    """A vLLM server that is down or answers garbage."""

    exit_code = 3
