"""A bounded load driver for a vLLM OpenAI-compatible server on 127.0.0.1 (standard library only).

Why: the integration tests and the recordings in examples/ need the same, repeatable load before
and after a flag change, and /metrics snapshots taken during it. It sends `/v1/completions`
requests from N threads until `--duration` seconds or `--max-requests` requests, whichever comes
first, and saves `/metrics` every `--metrics-every` seconds to `metrics-<scenario>-<n>.txt`, whose
first line is `# scraped_at <UTC ISO time> scenario=<s> snapshot=<n>`.

Each prompt is `--shared-prefix-words` words that every request shares (the same seed gives the
same prefix) followed by `--prompt-words` random words; the summary gives the mean prompt length
in tokens as vLLM counted it (`usage.prompt_tokens`).

It only talks to loopback: any other host is refused. It prints one JSON summary line.

    python tools/realvllm/load.py --port 8011 --scenario kv-pressure --concurrency 24 \
        --duration 60 --max-tokens 512 --ignore-eos --outdir runs --metrics-every 15
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
WORDS = (
    "alpha beta gamma delta kernel token cache block queue batch model layer head value key "
    "prefix decode prefill engine worker thread memory page limit window stream server "
    "request latency budget sample index vector matrix tensor shape route load scale"
).split()


def _check_host(host: str) -> None:
    if host not in LOOPBACK:
        raise SystemExit(f"load.py: refusing to send load to {host!r}: loopback only")


def _get(url: str, timeout: float = 10.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def served_model(base: str) -> str:
    """The first model id /v1/models lists."""
    return json.loads(_get(base + "/v1/models"))["data"][0]["id"]


def save_metrics(base: str, outdir: Path, scenario: str, index: int, note: str = "") -> Path:
    """Write one /metrics snapshot with its `# scraped_at` first line; return its path."""
    at = datetime.now(UTC).isoformat(timespec="milliseconds")
    body = _get(base + "/metrics").decode("utf-8", "replace")
    path = outdir / f"metrics-{scenario}-{index}.txt"
    head = f"# scraped_at {at} scenario={scenario} snapshot={index}{(' ' + note) if note else ''}\n"
    path.write_text(head + body, encoding="utf-8")
    return path


def _prompt(rng: random.Random, words: int, prefix: str) -> str:
    return prefix + " ".join(rng.choice(WORDS) for _ in range(words))


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def run_load(
    *,
    host: str = "127.0.0.1",
    port: int,
    scenario: str = "load",
    concurrency: int = 8,
    duration: float = 30.0,
    max_requests: int = 10_000,
    max_tokens: int = 128,
    prompt_words: int = 40,
    shared_prefix_words: int = 0,
    ignore_eos: bool = False,
    model: str | None = None,
    outdir: Path | None = None,
    metrics_every: float = 0.0,
    metrics_start_index: int = 1,
    seed: int = 0,
    request_timeout: float = 300.0,
) -> dict[str, Any]:
    """Drive the load; return a summary (requests, tokens, tokens/s, latency quantiles, snapshots)."""
    _check_host(host)
    base = f"http://{host}:{port}"
    model = model or served_model(base)
    rng0 = random.Random(seed)
    prefix = (
        (" ".join(rng0.choice(WORDS) for _ in range(shared_prefix_words)) + " ")
        if shared_prefix_words
        else ""
    )
    lock = threading.Lock()
    started = 0
    ok = failed = gen_tokens = prompt_tokens = 0
    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.monotonic() + duration
    stop = threading.Event()

    def worker(wid: int) -> None:
        nonlocal started, ok, failed, gen_tokens, prompt_tokens
        rng = random.Random(seed * 1000 + wid)
        while not stop.is_set() and time.monotonic() < deadline:
            with lock:
                if started >= max_requests:
                    return
                started += 1
            body = {
                "model": model,
                "prompt": _prompt(rng, prompt_words, prefix),
                "max_tokens": max_tokens,
                "temperature": 0.0,
            }
            if ignore_eos:
                body["ignore_eos"] = True
            req = urllib.request.Request(
                base + "/v1/completions",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            t0 = time.monotonic()
            try:
                with urllib.request.urlopen(req, timeout=request_timeout) as r:
                    out = json.loads(r.read())
                usage = out.get("usage", {})
                n = int(usage.get("completion_tokens", 0))
                with lock:
                    ok += 1
                    gen_tokens += n
                    prompt_tokens += int(usage.get("prompt_tokens", 0))
                    latencies.append(time.monotonic() - t0)
            except (urllib.error.URLError, OSError, ValueError) as e:
                with lock:
                    failed += 1
                    if len(errors) < 5:
                        errors.append(f"{type(e).__name__}: {e}")

    snapshots: list[str] = []
    t_start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(concurrency)]
    for t in threads:
        t.start()
    index = metrics_start_index
    next_snap = t_start + metrics_every if metrics_every > 0 else None
    while any(t.is_alive() for t in threads):
        if next_snap is not None and outdir is not None and time.monotonic() >= next_snap:
            try:
                snapshots.append(str(save_metrics(base, outdir, scenario, index, "during_load")))
                index += 1
            except OSError as e:
                errors.append(f"metrics: {e}")
            next_snap += metrics_every
        time.sleep(0.2)
    wall = time.monotonic() - t_start
    if outdir is not None:
        try:
            snapshots.append(str(save_metrics(base, outdir, scenario, index, "after_load")))
        except OSError as e:
            errors.append(f"metrics: {e}")
    return {
        "scenario": scenario,
        "requests_ok": ok,
        "requests_failed": failed,
        "generation_tokens": gen_tokens,
        "prompt_tokens_mean": round(prompt_tokens / ok, 1) if ok else None,
        "wall_s": round(wall, 2),
        "generation_tps": round(gen_tokens / wall, 1) if wall > 0 else None,
        "latency_p50_s": _quantile(latencies, 0.5),
        "latency_p99_s": _quantile(latencies, 0.99),
        "snapshots": snapshots,
        "errors": errors,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--scenario", default="load")
    p.add_argument("--model", default=None, help="served model name (default: first of /v1/models)")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--duration", type=float, default=30.0)
    p.add_argument("--max-requests", type=int, default=10_000)
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--prompt-words", type=int, default=40)
    p.add_argument("--shared-prefix-words", type=int, default=0)
    p.add_argument("--ignore-eos", action="store_true")
    p.add_argument("--outdir", type=Path, default=None)
    p.add_argument("--metrics-every", type=float, default=0.0)
    p.add_argument("--metrics-start-index", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if a.outdir is not None:
        a.outdir.mkdir(parents=True, exist_ok=True)
    summary = run_load(
        host=a.host,
        port=a.port,
        scenario=a.scenario,
        concurrency=a.concurrency,
        duration=a.duration,
        max_requests=a.max_requests,
        max_tokens=a.max_tokens,
        prompt_words=a.prompt_words,
        shared_prefix_words=a.shared_prefix_words,
        ignore_eos=a.ignore_eos,
        model=a.model,
        outdir=a.outdir,
        metrics_every=a.metrics_every,
        metrics_start_index=a.metrics_start_index,
        seed=a.seed,
    )
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
