"""Prometheus alerting rules for vLLM (the recording rules they read are in
``observe.monitoring.recording_rules``), generated from one Settings object, and the rule files of both.

Why generated: thresholds belong to the instance (its KV capacity, its ``--max-num-seqs``, its
latency SLOs), and the same rules must come out as plain rule files (``alerts/*.yml``, what
``observe generate alerts`` writes and Prometheus loads) and as a Prometheus-Operator
``PrometheusRule``. Rules are data here; rendering is one ``yaml.safe_dump``.

Recording rules (``level:metric:operations``) first fold vLLM's renamed metrics into one series
per canonical metric, so alerts and dashboards work on every vLLM version. Every alert carries ``severity``, ``component`` (used by
Alertmanager inhibition), ``summary``, ``description`` and a ``runbook_url`` into
``docs/runbooks.md``. SLO alerts are multi-window, multi-burn-rate (kubernetes-mixin style).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from observe.errors import ConfigError
from observe.failures import crashes
from observe.failures import kinds as failurekinds
from observe.failures.kinds import ALERT_CRASHED, ALERT_OOM, ALERT_STARTUP_FAILED
from observe.flags import vllmflags
from observe.metrics import names, promql
from observe.monitoring.files import write_texts
from observe.monitoring.recording_rules import (  # the recording rules, and the helpers the alerts share with them
    _num,
    _sel,
    by,
    recording_rules,
    sidecar_by,
    sidecar_up,
    slo_levels,
    target_by,
    vllm_absent,
    vllm_up,
)
from observe.settings import Settings

__all__ = [
    "by",
    "sidecar_by",
    "target_by",
    "recording_rules",
    "alert_rules",
    "rule_group",
    "rule_files",
    "render_rules",
    "prometheus_rule_manifest",
    "write_alerts",
    "RULES_FILE",
]

RULES_FILE = "vllm-observe.rules.yml"
GROUP_NAME = "vllm-observe"


# Engine-error kinds (model.EngineError.kind) of a launch that failed to start: the sidecar names
# the current one (with vLLM's reason) in observe_engine_startup_failure_info (see observe.failures.crashes).
STARTUP_KINDS = crashes.STARTUP_KINDS


def _seconds(d: str) -> int:
    """Whole seconds in a Prometheus duration (Settings has checked its form)."""
    return int(promql.duration_seconds(d, strict=True) or 0)


# VLLMEngineStuck's subquery resolution: finer than an evaluation interval (compose evaluates every 15s,
# kube-prometheus-stack every 30s), so the point a left-open range drops (Prometheus 3) is a step whose
# value the next point still reads, and the window means the same on Prometheus 2 and 3
STUCK_STEP = "15s"


def stuck_window(s: Settings) -> str:
    """The window VLLMEngineStuck reads the token counters as flat over: stuck_flat_window, or
    stuck_after_s when that is shorter."""
    return promql.format_duration(min(_seconds(s.stuck_flat_window), s.stuck_after_s))


def stuck_for(s: Settings) -> str:
    """VLLMEngineStuck's for: the counters must be flat over stuck_window, then stay so for the
    rest of stuck_after_s — so the page comes stuck_after_s after the last token."""
    return promql.format_duration(s.stuck_after_s - _seconds(stuck_window(s)))


def _traffic_window(s: Settings, short_w: str) -> str:
    """The window a burn alert requires traffic in NOW: the pair's short window, or rate_window
    when that is shorter — a server idle since the incident has no one left to hurt, and a 30m
    short window would otherwise keep paging for half an hour after the load stopped."""
    return short_w if _seconds(short_w) <= _seconds(s.rate_window) else s.rate_window


def _traffic_text(s: Settings, short_w: str) -> str:
    now = _traffic_window(s, short_w)
    return f"over {short_w}" if now == short_w else f"over {short_w} and over the last {now}"


def _burn(s: Settings, level: str, level_by: str, key: str, long_w: str, short_w: str, limit: str) -> str:
    """One burn-rate pair at one level: both windows over the limit, with traffic (the floor) over
    the short window and over the last _traffic_window."""
    floor = _num(s.min_request_rate)
    expr = (
        f"{level}:vllm_{key}_slo_errors:ratio_rate{long_w} > {limit}\nand\n"
        f"{level}:vllm_{key}_slo_errors:ratio_rate{short_w} > {limit}\n"
        f"and on ({level_by})\n{level}:vllm_requests:rate{short_w} >= {floor}"
    )
    now = _traffic_window(s, short_w)
    if now != short_w:
        expr += f"\nand on ({level_by})\n{level}:vllm_requests:rate{now} >= {floor}"
    return expr


def _served(s: Settings, level: str, level_by: str, key: str, long_w: str, short_w: str) -> str:
    """A burn pages only about a server that has answered every scrape through the pair's short
    window: not while vLLM is down, and not when a new launch answers after an outage, about the
    requests of the launch that died (the long window still holds them). An outage also restarts
    the burn's for:. A model's burn is silenced likewise while one of its replicas was down."""
    gap = f"min_over_time(up{_sel(s)}[{short_w}]) < 1"
    if level == "instance":
        return f"\nunless on ({target_by(s)})\n{gap}"
    return (
        f"\nunless on ({level_by})\ngroup by ({level_by}) (\n"
        f"  instance:vllm_{key}_slo_errors:ratio_rate{long_w}\n  and on ({target_by(s)}) {gap}\n)"
    )


def _queue_cause(s: Settings) -> str:
    """The cause and the fix leading a burn page's summary when requests wait for a batch slot:
    "16 of 16 sequences busy, 23 waiting: raise --max-num-seqs …" (the sidecar's --max-num-seqs
    where it reports one); nothing when nobody waits."""
    BY, SBY = by(s), sidecar_by(s)

    def ask(expr: str, labels: str) -> str:
        names = labels.replace(",", " ").split()
        fmt = ",".join(f"{m}=%q" for m in names)
        return (
            f'printf "{expr.format(sel="{" + fmt + "}")}" '
            + " ".join(f"$labels.{m}" for m in names)
            + " | query"
        )

    waiting = ask("instance:vllm_requests_waiting:sum{sel} > 0", BY)
    running = ask("instance:vllm_requests_running:sum{sel}", BY)
    slots = ask("max(observe_vllm_max_num_seqs{sel})", SBY)
    return (
        f"{{{{ with {waiting} }}}}{{{{ $w := . | first | value }}}}"
        f"{{{{ with {running} }}}}{{{{ . | first | value | humanize }}}}{{{{ end }}}}"
        f"{{{{ with {slots} }}}} of {{{{ . | first | value | humanize }}}}{{{{ end }}}} sequences busy, "
        "{{ $w | humanize }} waiting: raise --max-num-seqs if the KV cache has room, or add replicas. "
        "{{ end }}"
    )


def _unknown_batch(s: Settings) -> tuple[float, int]:
    """Where neither the sidecar nor Settings gives the batch (vLLM's default depends on the release
    and the GPU): (queue_batch_share of the largest batch vLLM defaults to on a GPU, that batch), so
    the alert waits at least as long as it would on any GPU whose default batch were known."""
    largest = vllmflags.largest_gpu_max_num_seqs()
    return s.queue_batch_share * largest, largest


def _fallback_waiting(s: Settings) -> float:
    """The absolute queue threshold: Settings.waiting_threshold where known, else _unknown_batch's."""
    known = s.waiting_threshold
    return known if known is not None else _unknown_batch(s)[0]


def queue_backlog_expr(s: Settings) -> str:
    """Waiting requests over a share of the server's own --max-num-seqs (the sidecar's
    observe_vllm_max_num_seqs, read from the launch's flags); where no sidecar reports it, the
    absolute threshold (_fallback_waiting). An explicit waiting_requests is used alone."""
    absolute = f"instance:vllm_requests_waiting:sum > {_num(_fallback_waiting(s))}"
    if s.waiting_requests is not None:
        return absolute
    SBY = sidecar_by(s)
    return (
        f"instance:vllm_requests_waiting:sum\n> on ({SBY}) group_left ()\n"
        f"({_num(s.queue_batch_share)} * max by ({SBY}) (observe_vllm_max_num_seqs))\nor\n"
        f"(\n  {absolute}\n  unless on ({SBY}) observe_vllm_max_num_seqs\n)"
    )


def _queue_description(s: Settings) -> str:
    if s.waiting_requests is not None:
        return (
            f"More than {_num(s.waiting_requests)} requests have waited for {s.queue_for}. The server is over "
            "capacity: add replicas, or if the KV cache has room raise --max-num-seqs."
        )
    share = _num(s.queue_batch_share * 100)
    if s.max_num_seqs:
        fallback = f"{_num(s.max_num_seqs)} requests where no sidecar reports it"
    else:
        waiting, largest = _unknown_batch(s)
        fallback = (
            f"where no sidecar reports it, {_num(waiting)} requests: {share}% of {_num(largest)}, the "
            "largest batch vLLM defaults to on a GPU, as the GPU is unknown"
        )
    return (
        f"More than {share}% of a full batch (--max-num-seqs, as the observe sidecar read it from the "
        f"launch; {fallback}) has waited for "
        f"{s.queue_for}: the batch is full and requests queue for a slot, so their time to first token "
        "grows by whole requests. Add replicas, or if the KV cache has room raise --max-num-seqs."
    )


# ---------------------------------------------------------------- alerting rules


def _alert(
    s: Settings,
    name: str,
    expr: str,
    for_: str,
    severity: str,
    component: str,
    summary: str,
    description: str,
) -> dict[str, Any]:
    rule: dict[str, Any] = {"alert": name, "expr": expr}
    if for_ not in ("0s", "0m"):
        rule["for"] = for_
    rule["labels"] = {"severity": severity, "component": component}
    rule["annotations"] = {
        "summary": summary,
        "description": description,
        "runbook_url": f"{s.runbook_base}#{name.lower()}",
    }
    return rule


def _recent_errors(s: Settings, kinds: tuple[str, ...], window: str) -> str:
    """True while a sidecar engine-error counter of these kinds rose within ``window`` — also when
    the series is new (the sidecar creates a kind's counter on its first occurrence)."""
    kind = f'kind="{kinds[0]}"' if len(kinds) == 1 else f'kind=~"{"|".join(kinds)}"'
    return _recent_increase(s, f"observe_vllm_engine_errors_total{{{kind}}}", "kind", window)


def _recent_increase(s: Settings, sel: str, label: str, window: str) -> str:
    """True while the counter ``sel`` rose within ``window``, by (sidecar_by, label) — also when the
    series is new (a sidecar that starts after the event, or creates the series on its first)."""
    keys = sidecar_by(s)
    return (
        f"sum by ({keys}, {label}) (increase({sel}[{window}])) > 0\nor\n"
        f"sum by ({keys}, {label}) ({sel} > 0 unless {sel} offset {window})"
    )


def _query_label(metric: str, match: str, label: str, *, then: str = "", otherwise: str | None = None) -> str:
    """An annotation template reading ``label`` of the series of ``metric`` that match this alert's
    labels (``match``: label names): the value goes in the text, not in the alert's identity. With
    ``otherwise``: ``then`` before a value, ``otherwise`` in its place where it is empty (or no
    series matches), so that a page never says "Fix: " with nothing after it."""
    labels = match.replace(",", " ").split()
    fmt = ",".join(f"{m}=%q" for m in labels)
    args = " ".join(f"$labels.{m}" for m in labels)
    each = f'{{{{ range printf "{metric}{{{fmt}}}" {args} | query }}}}'
    if otherwise is None:
        return f"{each}{{{{ .Labels.{label} }}}}{{{{ end }}}}"
    return (
        f'{{{{ $found := "" }}}}{each}{{{{ $found = .Labels.{label} }}}}{{{{ end }}}}'
        f"{{{{ with $found }}}}{then}{{{{ . }}}}{{{{ else }}}}{otherwise}{{{{ end }}}}"
    )


def alert_rules(s: Settings) -> list[dict[str, Any]]:
    """Every alert; reads the recording rules above and the sidecar's series."""
    w = s.rate_window
    BY, TBY, SBY = by(s), target_by(s), sidecar_by(s)
    inst = "{{ $labels.instance }}"
    model = "{{ $labels.model_name }}"
    rules = [
        _alert(
            s,
            "VLLMDown",
            f"{vllm_up(s)} == 0",
            s.down_for,
            "critical",
            "vllm",
            f"vLLM {inst} is down or its /metrics cannot be scraped.",
            f"Prometheus has failed to scrape {inst} (job {{{{ $labels.job }}}}) for {s.down_for}. "
            "The server is down, restarting, or still loading the model; check the container and "
            "the engine log for an OOM or startup error.",
        ),
        _alert(
            s,
            "VLLMTargetMissing",
            vllm_absent(s),
            s.down_for,
            "critical",
            "vllm",
            "No vLLM target is being scraped.",
            f"Prometheus has had no vLLM target ({vllm_absent(s)}) for {s.down_for}: every vLLM "
            "pod is gone, or the PodMonitor / scrape config no longer selects them (labels, namespace, "
            "port name). Nothing else about vLLM can alert while this fires.",
        ),
        _alert(
            s,
            "VLLMEngineStuck",
            # requests in flight at every evaluation of the window (a subquery), not only now: the first
            # requests at an idle server find the counters flat until their first step ends; and most
            # scrapes of the window answered, not the last one: a failed scrape (series stale for one
            # evaluation) must not reset for: nor resolve the page. The subquery's step is explicit
            # (STUCK_STEP): Prometheus 3's left-open range drops the point at the window's start, which
            # at the default step (the evaluation interval) loses a whole interval of the window
            f"min_over_time((\n  instance:vllm_requests_running:sum\n  + on ({BY})\n"
            f"  instance:vllm_requests_waiting:sum\n)[{stuck_window(s)}:{STUCK_STEP}]) > 0\nand on ({BY})\n(\n"
            f"  sum by ({BY}) (increase({names.GENERATION_TOKENS_TOTAL}{_sel(s)}[{stuck_window(s)}]))\n"
            f"  + on ({BY})\n"
            f"  sum by ({BY}) (increase({names.PROMPT_TOKENS_TOTAL}{_sel(s)}[{stuck_window(s)}]))\n"
            f") == 0\nand on ({TBY})\navg_over_time(up{_sel(s)}[{stuck_window(s)}]) >= 0.5",
            stuck_for(s),
            "critical",
            "vllm",
            f"vLLM {model} on {inst} is stuck: {{{{ $value }}}} requests in flight, no token produced.",
            f"For {promql.format_duration(s.stuck_after_s)} {inst} has had requests running or waiting while its prompt and "
            "generation token counters did not move, and its /metrics answered (so /health may still say "
            "200): the engine core is hung (stopped, deadlocked, a collective op waiting on a dead rank). "
            "Requests will time out; restart vLLM after saving its log (`observe diagnose` reads the hang).",
        ),
        _alert(
            s,
            "VLLMKVCacheSaturated",
            f"quantile_over_time(0.9, instance:vllm_kv_cache_usage:ratio[{s.kv_smooth_window}]) > "
            f"{_num(s.kv_usage_ratio)}",
            s.kv_for,
            "warning",
            "vllm",
            f"KV cache of {model} on {inst} is {{{{ $value | humanizePercentage }}}} full "
            f"(90th percentile over {s.kv_smooth_window}).",
            f"KV-cache usage (its 90th percentile over {s.kv_smooth_window}, which a saturated cache's "
            f"swings do not break) has stayed above {_num(s.kv_usage_ratio * 100)}% for {s.kv_for}: new requests "
            "wait or preempt running ones. Lower --max-num-seqs or --max-model-len, raise "
            "--gpu-memory-utilization, use --kv-cache-dtype fp8, or add replicas.",
        ),
        _alert(
            s,
            "VLLMPreemptionsSustained",
            f"instance:vllm_preemptions:rate{w} > {_num(s.preemptions_per_s)}",
            s.preemptions_for,
            "warning",
            "vllm",
            f'{model} on {inst} preempts {{{{ $value | printf "%.2f" }}}} requests/s.',
            f"vLLM has been preempting requests for {s.preemptions_for} (KV cache too small for the batch): "
            "preempted requests are recomputed, wasting compute and raising latency. Lower "
            "--max-num-seqs or --max-num-batched-tokens, or give the KV cache more memory.",
        ),
        _alert(
            s,
            "VLLMQueueBacklog",
            queue_backlog_expr(s),
            s.queue_for,
            "warning",
            "vllm",
            f"{{{{ $value | humanize }}}} requests are waiting on {model} at {inst}.",
            _queue_description(s),
        ),
    ]
    floor = _num(s.min_request_rate)
    for key, label, canonical_name, unit, threshold, target in (
        ("ttft", "TTFT", "a time to first token", "requests", s.ttft_slo_seconds, s.ttft_slo_target),
        ("itl", "ITL", "an inter-token latency", "tokens", s.itl_slo_seconds, s.itl_slo_target),
    ):
        budget = 1.0 - target
        (_, inst_by, _), (_, model_by, _) = slo_levels(s)
        for level, level_by, prefix in slo_levels(s):
            where = f"{model} on {inst}" if level == "instance" else f"{model} (all replicas)"
            for long_w, short_w, factor, for_, severity in s.burn_windows:
                speed = "Fast" if severity == "critical" else "Slow"
                limit = _num(factor * budget)
                expr = _burn(s, level, level_by, key, long_w, short_w, limit)
                if level != "instance":
                    # one incident, one page: a model whose replica already burns this pair pages per
                    # instance only; the per-model alert is for a burn no single replica shows
                    covered = _burn(s, "instance", inst_by, key, long_w, short_w, limit)
                    expr = f"(\n{expr}\n)\nunless on ({model_by})\n(\n{covered}\n)"
                expr += _served(s, level, level_by, key, long_w, short_w)
                rule = _alert(
                    s,
                    f"{prefix}{label}SLOBurn{speed}",
                    expr,
                    for_,
                    severity,
                    "vllm",
                    (_queue_cause(s) if level == "instance" else "")
                    + f"{where} burns its {label} error budget {_num(factor)}x too fast.",
                    f"{{{{ $value | humanizePercentage }}}} of {unit} over the last {long_w} had {canonical_name} "
                    f"above {_num(threshold)}s (SLO: {_num(target * 100)}% under {_num(threshold)}s; burn rate above "
                    f"{_num(factor)} over both {long_w} and {short_w}, with at least {floor} requests/s "
                    f"{_traffic_text(s, short_w)}). Look "
                    "at queueing and preemptions; lower --max-num-batched-tokens or --max-num-seqs, or add replicas.",
                )
                rule["labels"].update({"long_window": long_w, "short_window": short_w})
                rules.append(rule)
    rules += [
        _alert(
            s,
            "VLLMRequestErrors",
            f"(\n  instance:vllm_request_errors:ratio_rate{w} > {_num(s.error_ratio)}\n"
            f"  and on ({BY}) sum by ({BY}) (instance:vllm_request_success:rate{w}) >= {floor}\n)\n"
            f"or on ({TBY})\n(\n"
            f"  instance:vllm_http_5xx:ratio_rate{w} > {_num(s.error_ratio)}\n"
            f"  and on ({TBY}) instance:vllm_http_requests:rate{w} >= {floor}\n)",
            s.errors_for,
            "warning",
            "vllm",
            f"{{{{ $value | humanizePercentage }}}} of requests to {inst} fail.",
            f'More than {_num(s.error_ratio * 100)}% of requests ended with finished_reason="error" or an '
            f"HTTP 5xx for {s.errors_for}, at {floor} requests/s or more. Read the engine log around the "
            "first errors.",
        ),
        _alert(
            s,
            ALERT_OOM,
            _recent_errors(s, failurekinds.kinds_alerted(ALERT_OOM), s.engine_error_window),
            "0m",
            "critical",
            "vllm-logs",
            f"vLLM at {inst} ran out of memory.",
            f"The observe sidecar saw a CUDA out-of-memory error in the vLLM log within {s.engine_error_window}. "
            "Lower --gpu-memory-utilization (other processes share the GPU), --max-num-seqs or "
            "--max-num-batched-tokens; check for other processes on the GPU.",
        ),
        _alert(
            s,
            ALERT_STARTUP_FAILED,
            f"max by ({SBY}, kind, reason) (observe_engine_startup_failure_info) > 0",
            "0m",
            "critical",
            "vllm-logs",
            f"{{{{ $labels.reason }}}} (vLLM at {inst} failed to start: {{{{ $labels.kind }}}})",
            "vLLM rejected its launch or failed during start-up; the observe sidecar read the reason in its "
            "log: {{ $labels.reason }} "
            + _query_label(
                "observe_engine_startup_failure_info",
                f"{SBY} kind reason",
                "fix",
                then="Fix: ",
                otherwise="The sidecar named no fix: `observe diagnose` on the log says what to change.",
            )
            + " The alert resolves when a launch serves (a stats line, or /metrics answering).",
        ),
        _alert(
            s,
            ALERT_CRASHED,
            # the value is the crash count (labelled below): each crash is its own alert
            f"max by ({SBY}, cause) (observe_engine_crashes_total)\nand on ({SBY}, cause)\n(\n"
            + _recent_increase(s, "observe_engine_crashes_total", "cause", s.engine_error_window)
            + "\n)",
            "0m",
            "critical",
            "vllm-logs",
            "".join(
                f'{{{{ if eq $labels.cause "{c}" }}}}{text}{{{{ else }}}}'
                for c, text in failurekinds.CAUSE_HEADLINES.items()
            )
            + "engine crashed ({{ $labels.cause }})"
            + "{{ end }}" * len(failurekinds.CAUSE_HEADLINES)
            + f" (vLLM at {inst})",
            f"The observe sidecar read an unexpected engine exit in the vLLM log within {s.engine_error_window} "
            "(cause {{ $labels.cause }}: "
            + "".join(
                f'{{{{ if eq $labels.cause "{c}" }}}}{text}{{{{ end }}}}'
                for c, text in crashes.CAUSES.items()
            )
            + "). A requested shutdown does not count. Read the log before the exit; `observe diagnose` "
            "names the crash and what to change.",
        ),
        _alert(
            s,
            "ObserveSidecarDown",
            f"{sidecar_up(s)} == 0",
            s.sidecar_down_for,
            "warning",
            "observe",
            f"The observe sidecar for {inst} is down.",
            f"Prometheus has failed to scrape the observe sidecar for {s.sidecar_down_for}: log-derived alerts "
            "(OOM, startup failure) and recommendations are blind. Restart the sidecar container.",
        ),
        _alert(
            s,
            "ObserveCannotReachVLLM",
            "observe_up == 0",
            s.unreachable_for,
            "warning",
            "vllm",
            f"The observe sidecar cannot scrape vLLM at {inst}.",
            f"The sidecar's scrapes of vLLM /metrics have failed for {s.unreachable_for} "
            "(observe_scrape_errors_total rises). Check --vllm-url and that vLLM is up.",
        ),
        _alert(
            s,
            "ObserveRecommendationPending",
            f"max by ({SBY}, flag) (observe_recommendation_info) > 0",
            s.recommendation_for,
            "info",
            "observe",
            f"observe recommends changing {{{{ $labels.flag }}}} for {inst}.",
            f"For {s.recommendation_for} the sidecar has recommended changing {{{{ $labels.flag }}}} (now: "
            + _query_label("observe_recommendation_info", f"{SBY} flag", "current")
            + ", suggested: "
            + _query_label("observe_recommendation_info", f"{SBY} flag", "suggested")
            + "). The values are not labels of the alert: one that drifts does not restart its for:. "
            "See /api/diagnosis on the sidecar for the evidence, then change the flag and restart vLLM.",
        ),
    ]
    for rule in rules:
        if rule["alert"] == ALERT_CRASHED:
            # each crash its own alert (crash="2": the instance's second of this cause): Alertmanager
            # sends no resolution for an alert that resolved while inhibited (a start-up failure
            # silences the crash), so a later crash with the same labels would match the last page
            # sent and stay unsent for repeat_interval
            rule["labels"]["crash"] = "{{ $value }}"
    return rules


def rule_group(s: Settings | None = None) -> dict[str, Any]:
    """ONE group: recording rules first, then the alerts that read them. Rules of a group run
    sequentially at one evaluation time, so an alert sees this evaluation's recorded series —
    with two groups (evaluated independently) its `for:` would start one interval late, or not."""
    s = s or Settings()
    group: dict[str, Any] = {"name": GROUP_NAME}
    if s.group_interval:
        group["interval"] = s.group_interval
    group["rules"] = recording_rules(s) + alert_rules(s)
    return group


# ---------------------------------------------------------------- rendering


class _Dumper(yaml.SafeDumper):
    """Literal block style for multi-line strings, so PromQL stays readable in the files."""


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_representer)

_HEADER = (
    "# Generated by `observe generate alerts` (observe/monitoring/alerts.py). Do not edit by hand:\n"
    "# change Settings and regenerate; tests/test_alerts.py fails on drift.\n"
)


def _dump(obj: Any) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=True)


def rule_files(s: Settings | None = None) -> dict[str, dict[str, Any]]:
    """File name → rule-file content ({"groups": [...]})."""
    return {RULES_FILE: {"groups": [rule_group(s)]}}


def render_rules(s: Settings | None = None) -> dict[str, str]:
    """File name → YAML text, as written to ``alerts/``."""
    return {name: _HEADER + _dump(content) for name, content in rule_files(s).items()}


def prometheus_rule_manifest(
    s: Settings | None = None, name: str = "observe-vllm", namespace: str | None = None
) -> str:
    """The same groups as one Prometheus-Operator ``PrometheusRule`` manifest."""
    s = s or Settings()
    metadata: dict[str, Any] = {"name": name}
    namespace = namespace or s.namespace
    if namespace:
        metadata["namespace"] = namespace
    metadata["labels"] = {
        "app.kubernetes.io/name": "observe",
        "app.kubernetes.io/component": "vllm-rules",
        **dict(s.rule_labels),
    }
    manifest = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": metadata,
        "spec": {"groups": [rule_group(s)]},
    }
    return _HEADER + _dump(manifest)


def write_alerts(out_dir: Path, fmt: str = "prometheus", s: Settings | None = None) -> list[Path]:
    """Write the rule files (or the PrometheusRule manifest) into ``out_dir``; return the paths."""
    if fmt not in ("prometheus", "prometheus-operator"):
        raise ConfigError(f"unknown alerts format {fmt!r} (prometheus | prometheus-operator)")
    if fmt == "prometheus-operator":
        return write_texts(out_dir, {"prometheusrule.yml": prometheus_rule_manifest(s)}, "alerts")
    return write_texts(out_dir, render_rules(s), "alerts")
