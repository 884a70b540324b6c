"""The workload of `observe tune`: vLLM's own benchmark client, `vllm bench serve`, from the installed
vLLM, run in vLLM's interpreter; its figures are read from the client's `--save-result` JSON.

A home-made load loop would measure something else than what vLLM's users measure; the client's
datasets (random, sharegpt, custom, ...), request rate or max concurrency, lengths and seed are all
passed through as the client takes them.
"""

from __future__ import annotations

import json
import socket
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import requests

from observe.errors import ConfigError, ObserveError, TargetError

CLI = ("-m", "vllm.entrypoints.cli.main", "bench", "serve")


class WorkloadError(ObserveError):
    """The benchmark client refused the workload (a bad dataset, length or rate): a usage error."""


@dataclass(frozen=True)
class Workload:
    """What `vllm bench serve` sends: the dataset, how many prompts, their lengths, the pace."""

    dataset: str = "random"
    num_prompts: int = 60
    input_len: int = 128
    output_len: int = 64
    max_concurrency: int | None = 16
    request_rate: str = "inf"
    seed: int = 0
    ignore_eos: bool = True
    warmups: int = 0  # requests sent before the measured ones (the client's --num-warmups)
    extra: tuple[str, ...] = field(default_factory=tuple)  # more `vllm bench serve` words, as given
    # the random dataset's spread: lengths drawn from [L·(1−r), L·(1+r)] (--random-range-ratio);
    # output_range_ratio None: the same r for the outputs
    range_ratio: float | None = None
    output_range_ratio: float | None = None
    burstiness: float | None = None  # the gamma shape of the arrivals at a finite rate (--burstiness)
    # where the figures came from when `--workload-from` derived them (trafficfit.Traffic.to_dict)
    source: dict[str, Any] | None = field(default=None, compare=False)

    def args(self) -> list[str]:
        a = [
            "--dataset-name",
            self.dataset,
            "--num-prompts",
            str(self.num_prompts),
            "--request-rate",
            self.request_rate,
            "--seed",
            str(self.seed),
        ]
        if self.dataset == "random":
            a += ["--random-input-len", str(self.input_len), "--random-output-len", str(self.output_len)]
            a += self._range_ratio()
        if self.burstiness is not None:
            a += ["--burstiness", f"{self.burstiness:g}"]
        if self.max_concurrency is not None:
            a += ["--max-concurrency", str(self.max_concurrency)]
        if self.ignore_eos:
            a.append("--ignore-eos")
        if self.warmups:
            a += ["--num-warmups", str(self.warmups)]
        return [*a, *self.extra]

    def _range_ratio(self) -> list[str]:
        """One float for both lengths, else the client's JSON form (`{"input": r, "output": r}`)."""
        r, o = self.range_ratio, self.output_range_ratio
        if r is None and o is None:
            return []
        r, o = r if r is not None else 0.0, o if o is not None else r
        value = f"{r:g}" if r == o else json.dumps({"input": r, "output": o})
        return ["--random-range-ratio", value]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["extra"] = list(self.extra)
        return d


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_NO_BENCH = ("No module named", "invalid choice", "unrecognized arguments: bench", "has no attribute")


def preflight(
    python: str, model: str, tokenizer: str | None, workload: Workload, *, timeout: float = 600.0
) -> None:
    """Before anything is launched: does the installed vLLM have `vllm bench serve`, and does its
    client take this workload? The client is run against a closed local port: it builds the
    workload's requests (dataset, lengths, rate) and then finds no server, which it reports as
    failed requests with exit code 0; a workload it rejects exits non-zero first.

    ConfigError (no `bench serve`) or WorkloadError (the client's own words), one line each.
    """
    argv = [
        python,
        *CLI,
        "--backend",
        "vllm",
        "--base-url",
        f"http://127.0.0.1:{_closed_port()}",
        "--model",
        model,
        *(["--tokenizer", tokenizer] if tokenizer else []),
        "--disable-tqdm",
        *workload.args(),
    ]
    try:
        cp = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ConfigError(
            f"the installed vLLM's benchmark client ({python}) did not answer within {timeout:.0f} s"
        ) from None
    except OSError as e:
        raise ConfigError(f"cannot run the installed vLLM's benchmark client ({python}): {e}") from None
    if cp.returncode == 0:
        return
    out = cp.stderr + cp.stdout
    if any(m in out for m in _NO_BENCH) and "vllm/benchmarks" not in out:  # never reached the client
        raise ConfigError(
            f"the vLLM installed for {python} has no `vllm bench serve` (observe tune drives its "
            f"workload with it; vLLM 0.10 or later has it): {_last_line(out)}"
        )
    raise WorkloadError(f"vllm bench serve rejects the workload: {_last_line(out)}")


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    errs = [ln for ln in lines if "error" in ln.lower()]
    return (errs or lines or ["no output"])[-1][:300]


def reachable(url: str, *, timeout: float = 5.0) -> None:
    """TargetError (one line) when no vLLM answers `url`/health."""
    try:
        r = requests.get(url.rstrip("/") + "/health", timeout=timeout)
    except (requests.RequestException, ValueError) as e:
        raise TargetError(f"vLLM at {url} cannot be reached: {type(e).__name__}") from None
    if r.status_code != 200:
        raise TargetError(f"vLLM at {url} answers /health with HTTP {r.status_code}")


def run(
    python: str,
    url: str,
    model: str,
    tokenizer: str | None,
    workload: Workload,
    result: Path,
    *,
    goodput: dict[str, float] | None = None,
    timeout: float = 900.0,
    log: Path | None = None,
) -> dict[str, Any]:
    """Run the client once against `url`; return its result JSON (a dict).

    TargetError when the server cannot be reached, WorkloadError when the client rejects the
    workload (its own words), ObserveError when it gives no result.
    """
    reachable(url)
    argv = [
        python,
        *CLI,
        "--backend",
        "vllm",
        "--base-url",
        url,
        "--model",
        model,
        *(["--tokenizer", tokenizer] if tokenizer else []),
        "--disable-tqdm",
        "--percentile-metrics",
        "ttft,tpot,itl,e2el",
        "--metric-percentiles",
        "50,99",
        *workload.args(),
        "--save-result",
        "--result-filename",
        str(result),
    ]
    if goodput:
        argv += ["--goodput", *[f"{k}:{v:g}" for k, v in goodput.items()]]
    result.parent.mkdir(parents=True, exist_ok=True)
    result.unlink(missing_ok=True)
    try:
        cp = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ObserveError(f"vllm bench serve did not finish within {timeout:.0f} s") from None
    except OSError as e:
        raise ConfigError(f"cannot run vllm bench serve ({python}): {e}") from None
    if log is not None:
        log.write_text(cp.stdout + cp.stderr, encoding="utf-8")
    if cp.returncode != 0 or not result.exists():
        out = cp.stderr + cp.stdout
        if "Connection refused" in out or "ClientConnectorError" in out:
            raise TargetError(f"vLLM at {url} stopped answering during the benchmark")
        raise WorkloadError(f"vllm bench serve rejected the workload: {_last_line(out)}")
    try:
        doc = json.loads(result.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ObserveError(f"vllm bench serve's result {result} is not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ObserveError(f"vllm bench serve's result {result} is not a JSON object")
    return doc
