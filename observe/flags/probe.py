"""Ask an installed vLLM about its `vllm serve` flags, in vLLM's own interpreter.

Run by path with the python of the vLLM to ask (observe need not be installed there):

    python probe.py describe          every option: its spellings, nargs, whether it takes a value
    python probe.py parse '[ARGV…]'   parse each argv (JSON list of lists) with vLLM's parser and
                                      the quick checks `vllm serve` runs before loading a model

It prints one JSON line after MARK (vLLM may print other lines first). Standard library only,
and written for the oldest Python a vLLM may run on.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

MARK = "@@observe-probe@@"


def _out(obj: object) -> None:
    sys.stdout.write(MARK + json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


class _Rejected(Exception):
    """vLLM's parser called error(): the argv is not accepted."""


def _describe(parser: argparse.ArgumentParser) -> list[dict]:
    switches = (
        argparse._StoreTrueAction,
        argparse._StoreFalseAction,
        argparse._StoreConstAction,
        argparse._HelpAction,
        argparse._VersionAction,
        argparse.BooleanOptionalAction,
    )
    acts = []
    for a in parser._actions:
        if not a.option_strings:
            continue
        nargs = a.nargs if a.nargs is None or isinstance(a.nargs, (int, str)) else str(a.nargs)
        acts.append(
            {
                "options": list(a.option_strings),
                "nargs": nargs,
                "takes_value": not (a.nargs == 0 or isinstance(a, switches)),
            }
        )
    return acts


def main(argv: list[str]) -> int:
    os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
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
        _out({"error": f"cannot import vLLM's argument parser: {type(e).__name__}: {e}"})
        return 0
    parser = make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))

    def _error(message: str) -> None:
        raise _Rejected(message)

    parser.error = _error
    if argv[:1] == ["describe"]:
        _out({"version": version, "actions": _describe(parser)})
        return 0
    results: list[dict[str, object]] = []
    for args in json.loads(argv[1]):
        try:
            validate_parsed_serve_args(parser.parse_args(args))
            results.append({"ok": True})
        except (_Rejected, ValueError, TypeError) as e:
            results.append({"ok": False, "error": str(e)})
    _out({"version": version, "ok": True, "results": results})
    return 0


if __name__ == "__main__":
    # run by path, this file's folder is sys.path[0]: drop it so its neighbours cannot shadow
    # the modules vLLM imports
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    sys.exit(main(sys.argv[1:]))
