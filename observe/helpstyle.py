"""Edge: how `observe --help` reads — what each option is for (HELP below: observe/cli/ declares its
options bare, name, default and metavar), every option's OBSERVE_<COMMAND>_<OPTION> variable shown
beside it, a metavar named after the option, switches without a value placeholder, usage lines
without typer's braces. It works on the click command the CLI builds (duck-typed: typer stays in
observe.cli)."""

from __future__ import annotations

import functools
from typing import Any

ENVVAR_PREFIX = "OBSERVE"  # every option OPT of command CMD is also read from OBSERVE_CMD_OPT


def with_envvars(cmd: Any, path: tuple[str, ...] = ()) -> None:
    """Give every option of every command its OBSERVE_<COMMAND>_<OPTION> variable (shown in --help),
    a metavar named after it, and a usage line without typer's braces."""
    _no_bool_placeholder(cmd)
    if hasattr(cmd, "commands"):
        for name, sub in cmd.commands.items():
            with_envvars(sub, (*path, name))
        return
    for p in cmd.params:
        if p.help is None and path:  # the root's --version says its own
            p.help = HELP[" ".join(path)][p.name]  # KeyError: an option with no line in HELP
        if p.param_type_name == "argument":  # usage line: PATH..., not typer's {PATH...}
            p._usage_display_name = functools.partial(_usage_name, p)  # type: ignore[method-assign]
        is_opt = p.param_type_name == "option"
        if is_opt and p.metavar is None and not p.is_flag and "|" not in _shown_type(p):
            p.metavar = p.name.upper().rstrip("_")  # --log LOG, not --log <list[str]>
        if is_opt and not p.is_eager and p.name and not p.hidden:
            long = max(p.opts, key=len).lstrip("-")  # as the user types it: --tp → tensor-parallel-size
            p.envvar = "_".join([ENVVAR_PREFIX, *path, long]).upper().replace("-", "_")
            p.show_envvar = True


def _no_bool_placeholder(cmd: Any) -> None:
    """A switch takes no value: no `<bool>` placeholder beside it in --help (-h/--help included)."""
    make = cmd.get_help_option

    def get_help_option(ctx: Any) -> Any:
        opt = make(ctx)
        if opt is not None:
            opt.metavar = ""
        return opt

    cmd.get_help_option = get_help_option
    for p in cmd.params:  # the group's own switches (--version, --install-completion) as well
        if p.param_type_name == "option" and p.is_flag:
            p.metavar = ""


def _shown_type(p: Any) -> str:
    """What typer would show as the value placeholder (`<text|json>` for a choice)."""
    try:
        return str(p.display_type(None) or "")
    except Exception:
        return ""


def _usage_name(p: Any) -> str:
    name = p.metavar or p.name.upper()
    if p.nargs != 1 and not name.endswith("..."):
        name += "..."
    return name if p.required else f"[{name}]"


# what each option is for, by command (`observe generate alerts`: "generate alerts") and parameter name
HELP: dict[str, dict[str, str]] = {
    "capacity": {
        "model": "Model name (built-in table) or path of a Hugging Face config.json (or its folder).",
        "gpu": "GPU name from the built-in table (H100, A100-80GB, L4, RTX-4090, ...).",
        "gpu_memory_gib": "Total GPU memory as torch reports it (overrides --gpu's figure).",
        "vllm_version": "vLLM version; decides V0/V1 accounting and defaults (default: newest).",
        "tp": "Tensor parallel size.",
        "pp": "Pipeline parallel size.",
        "gpu_memory_utilization": "Fraction of total GPU memory vLLM may use. Default: vLLM's for the version.",
        "max_model_len": "Default: the model's max_position_embeddings.",
        "kv_cache_dtype": "auto (model dtype) or fp8 (fp8_e4m3, fp8_e5m2).",
        "block_size": "KV-cache block size in tokens. Default: vLLM's for the version.",
        "max_num_batched_tokens": "Default: vLLM's for this GPU and version.",
        "max_num_seqs": "Default: vLLM's for this GPU and version.",
        "weights_gib": "Weights per GPU if known (e.g. from 'Loading model weights took').",
        "quantization": "fp8, awq, gptq or mxfp4: size the weights in that checkpoint format.",
        "gpu_free_gib": "Free memory of each GPU before vLLM starts (one figure or one per GPU): vLLM's least-free rule.",
        "concurrency": "Concurrent requests to size for (with --context).",
        "context": "Tokens per request (prompt + output).",
        "fmt": "text or json.",
        "output": "Write the answer here instead of stdout.",
    },
    "config show": {
        "fmt": "yaml (commented, what --config reads) or json.",
    },
    "diagnose": {
        "paths": "Log files (plain or .gz) or folders of vLLM logs; `-` reads standard input.",
        "metrics": "Saved /metrics snapshots (text exposition).",
        "prometheus": "Read vLLM's history from this Prometheus (or Thanos Query / Mimir) URL. Credentials from OBSERVE_PROMETHEUS_TOKEN or OBSERVE_PROMETHEUS_USER/_PASSWORD.",
        "since": "With --prometheus: the last DURATION (default 6h).",
        "start": "With --prometheus: ISO 8601 start time.",
        "end": "With --prometheus: ISO 8601 end time (default now).",
        "selector": 'With --prometheus: label selector, e.g. namespace="llm",model_name="m".',
        "step": "With --prometheus: query step (default: raw samples up to 6h, else a step from the range).",
        "fmt": "Report format.",
        "output": "Write the report here instead of stdout.",
        "fail_on": "Exit 1 when a finding of this severity or worse is found.",
        "progress": "Progress bar on stderr for large inputs.",
        "partial_ok": "Exit 0 even when a file could be read only in part (a truncated .gz) or not at all.",
    },
    "generate dashboards": {
        "out": "Folder for the dashboard JSON files.",
    },
    "generate alerts": {
        "out": "Folder for the rule files (default: alerts; required with prometheus-operator).",
        "fmt": "prometheus: rule files; prometheus-operator: a PrometheusRule manifest (not into alerts/).",
        "max_num_seqs": "The instance's --max-num-seqs (queue-backlog threshold).",
        "kv_usage": "KV-cache usage ratio (0-1) that counts as full (kv_full_pct / 100).",
        "ttft_slo": "TTFT SLO threshold in seconds (e.g. 1.0; with custom buckets the largest bound at most it counts).",
        "itl_slo": "Inter-token latency SLO threshold in seconds (e.g. 0.1).",
        "runbook_base": "Where docs/runbooks.md is published (each alert links to its section).",
        "selector": 'Label matchers every rule adds, e.g. namespace="llm" (default: none, no job-name assumption).',
        "vllm_selector": 'Label matchers of the vLLM targets instead of --selector, e.g. job="vllm".',
        "rule_label": "KEY=VALUE label on the PrometheusRule (repeatable), e.g. release=prom.",
        "namespace": "Namespace of the PrometheusRule.",
        "min_request_rate": "Traffic floor (requests/s) of the SLO and error alerts.",
    },
    "generate kubernetes": {
        "out": "Folder for the generated manifests.",
    },
    "generate vllm-logging": {
        "out": "The logging.json vLLM reads (VLLM_LOGGING_CONFIG_PATH).",
        "vllm_version": "The vLLM release in the image, or the image (vllm/vllm-openai:v0.33.0).",
        "level": "What VLLM_LOGGING_LEVEL / --log-level would be (vLLM's stream; the file stays INFO).",
        "prefix": "What VLLM_LOGGING_PREFIX would be (vLLM's stream only).",
        "stream": "What VLLM_LOGGING_STREAM would be.",
        "formatter": "text or json (--logging-config.formatter), for vLLM's stream and uvicorn's.",
        "exclude_endpoints": "A path left out of the access log (--disable-access-log-for-endpoints; repeatable).",
        "uvicorn_level": "What --uvicorn-log-level would be.",
    },
    "run": {
        "run_dir": "Each launch gets DIR/NNN/ (vllm.log, metrics-K.txt); DIR/history.jsonl records every step.",
        "sidecar": "Run the sidecar against the launched vLLM.",
        "listen": "The sidecar's address.",
        "snapshot_every": "Save /metrics every S seconds (0: never).",
        "recommend_after": "Diagnose each launch after S seconds and print the recommended flags (0: never; SIGUSR1 asks at any time).",
        "apply_": "Offer to restart vLLM with the recommended flags (asks first).",
        "yes": "With --apply: restart without asking.",
        "max_changes": "Apply at most N changes in this run.",
        "quiet": "Do not echo vLLM's output (it still goes to the log).",
        "startup_timeout": "Seconds to wait for /health.",
        "log_max_bytes": "Rotate vllm.log at this size.",
        "log_backups": "Rotated parts to keep.",
    },
    "recommend": {
        "vllm_url": "Base URL of a running vLLM (http://127.0.0.1:8000).",
        "log": "Glob(s) of that vLLM's log files.",
        "interval": "Seconds between the two /metrics reads (rates need two).",
        "vllm_python": "Interpreter of the installed vLLM, to validate the flags against it.",
        "fmt": "text or json.",
    },
    "compare": {
        "before": "Before the change: a run folder (log + snapshots), or a saved diagnosis JSON (`diagnose --format json`, or the sidecar's /api/diagnosis: one window of its history).",
        "after": "After the change: a folder or a diagnosis JSON, as BEFORE.",
        "fmt": "text or json.",
    },
    "sidecar": {
        "log": "Glob of vLLM log files to follow (repeatable).",
        "pods": "NAMESPACE/POD shell patterns: follow those pods' CRI logs under --pods-root (a DaemonSet).",
        "pods_root": "The kubelet's pod log folder.",
        "container": "The container of --pods whose log is read.",
        "pod_selector": "Label selector (app=vllm): this node's pods it matches, from the Kubernetes API (NODE_NAME), are followed under --pods-root and scraped, one instance each.",
        "pod_metrics_port": "Port of their /metrics (default: prometheus.io/port, else port 'http').",
        "pod_metrics_path": "Path of their /metrics.",
        "kube_api": "Kubernetes API URL (default: in-cluster).",
        "kube_token_file": "Bearer token file (default: the pod's).",
        "kube_ca_file": "CA of the API (default: the pod's).",
        "vllm_url": "Base URL of vLLM (its /metrics is scraped).",
        "listen": "HOST:PORT for the sidecar's /metrics, /healthz, /api/diagnosis.",
        "scrape_interval": "How often to scrape vLLM's /metrics (e.g. 5s).",
        "window": "How far back the analysis looks (e.g. 30m, 1h).",
        "analyze_interval": "How often to re-run detection and advice.",
        "from_start": "Read the logs' history instead of starting at their end.",
        "polling": "Poll files instead of inotify/watchdog events.",
        "name": "Instance name in the diagnosis.",
        "warn_every": "Repeat a lasting warning (vLLM unreachable, no log file) this often.",
        "api_diagnosis": "Who may read /api/diagnosis: auto (loopback only, unless a token is set), public, off.",
        "api_token_file": "File whose first line is the bearer token /api/diagnosis requires (else $OBSERVE_API_TOKEN).",
        "state_dir": "Folder where read positions and crash counters survive a restart (the shared log volume, an emptyDir); without it a restart starts at the logs' end.",
    },
    "top": {
        "urls": "Base URLs of vLLM servers (their /metrics).",
        "sidecar_url": "A running sidecar per server, in the servers' order (its findings).",
        "log": "Log files of the (single) server: findings from them and its /metrics.",
        "interval": "How often to read the servers (e.g. 1s, 5s).",
        "once": "Read each server twice, a second apart (throughput is a rate), print the screen and exit.",
    },
    "tune": {
        "out": "DIR/history.jsonl, DIR/report.*, DIR/launches/NNN/.",
        "run_dir": "Tune the vLLM `observe run --run-dir DIR` manages (no command); its record: DIR/tune/.",
        "objective": "throughput (output tokens/s) or goodput (requests/s meeting the SLOs of --config).",
        "trials": "Configurations at most, the starting one included.",
        "time_budget": "Start no trial after S seconds.",
        "repeats": "Benchmark runs per configuration (at least 2: the spread).",
        "max_repeats": "Runs of a change at most while the noise leaves it undecided (the start and it relaunched in turn, A B B A).",
        "dataset": "vllm bench serve --dataset-name.",
        "num_prompts": "Requests per benchmark run.",
        "input_len": "--random-input-len",
        "output_len": "--random-output-len",
        "max_concurrency": "0: no limit (use --request-rate).",
        "request_rate": "Requests per second (inf: all at once).",
        "seed": "The client's random seed.",
        "warmups": "Requests sent before each measured run (the client's --num-warmups).",
        "bench_arg": "One more vllm bench serve word (repeatable).",
        "workload_from": "Replay a vLLM's own traffic: a run folder (metrics-K.txt, vllm.log) or a live URL; given options win (docs/tune.md).",
        "traffic_window": "With --workload-from URL: seconds between its two /metrics reads.",
        "quiet": "Echo vLLM's output (it always goes to the log).",
        "fmt": "text or json.",
    },
    "upgrade": {
        "to": "The vLLM release to move to (e.g. 0.34.0).",
        "log": "A vLLM log: its last launch's release and flags.",
        "url": "A running vLLM (/version, /metrics).",
        "from_version": "The release run now (default: input's).",
        "device": "GPU (CUDA, ROCm) or CPU.",
        "fmt": "text or json.",
    },
}
