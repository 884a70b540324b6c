"""Batch size and queues: requests that wait (memory-, sequence- or prefill-bound), too many
sequences in the batch, throughput that collapses under load. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from observe.advise import sched, seqs
from observe.failures import stuck
from observe.findingids import FindingId
from observe.model import Finding, StatsSample
from observe.rules.base import Doc, Lever, Rule, Section, State
from observe.rules.context import Context
from observe.rules.context import span as _span
from observe.rules.context import when as _when
from observe.rules.context import where as _where
from observe.rules.kv import KV_PLAN
from observe.rules.latency import PREFILL

if TYPE_CHECKING:
    import pandas as pd

    from observe.settings import Settings
else:
    from observe.timeline import pd  # imported on first use


@dataclass
class Waiting(State[StatsSample]):
    """Stats samples with requests waiting, with the KV cache full (≥ Settings.kv_queue_full_pct)
    or with room, and how often Waiting rose from one sample to the next. For a log that does not state
    --max-num-seqs, the cap the stats themselves show (``observed_cap``): the peak of Running, held while
    requests waited with the KV cache far from full (< Settings.seq_cap_kv_pct) in every sample in which requests
    waited (3 or more; a sample with nobody waiting, a queue drained, says nothing of a cap), or an interval at that
    peak in which no request was admitted (Waiting not fallen, no prompt tokens, generation going on) though the
    cache had room."""

    takes = StatsSample
    while_full: int = 0
    with_room: int = 0
    rises: int = 0
    last: StatsSample | None = None  # the previous stats line
    waited: int = 0  # stats lines with requests waiting
    peak: int | None = None  # the most Running seen
    held: int = (
        0  # samples at that peak with requests waiting, the cache far from full (0 again when it rises)
    )
    blocked: bool = False  # an interval from that peak admitted no request though the cache had room
    engines: int = 0  # engine indexes seen, as a bit set (one engine's cap only)

    def add(self, ev: StatsSample, settings: Settings) -> None:
        kv = ev.kv_usage_pct
        if ev.waiting and kv is not None:
            if kv >= settings.kv_queue_full_pct:
                self.while_full += 1
            else:
                self.with_room += 1
        last, self.last = self.last, ev
        self._cap(ev, last, settings)
        if (
            last is None
            or last.running is None
            or last.waiting is None
            or ev.running is None
            or ev.waiting is None
        ):
            return
        if ev.waiting > last.waiting:
            self.rises += 1

    @staticmethod
    def _room(ev: StatsSample, settings: Settings) -> bool:
        """Requests wait for a slot while the cache is far from full (requests waiting for something else, a
        connector's KV fetch or deferred ones, are no cap's)."""
        other = bool(ev.kv_fetch and any(ev.kv_fetch)) or bool(ev.deferred)
        kv = ev.kv_usage_pct
        return bool(ev.waiting) and not other and kv is not None and kv < settings.seq_cap_kv_pct

    def _cap(self, ev: StatsSample, last: StatsSample | None, settings: Settings) -> None:
        self.waited += bool(ev.waiting)
        self.engines |= 1 << min(ev.engine_index or 0, 62)
        if ev.running is None:
            return
        room = self._room(ev, settings)
        if self.peak is None or ev.running > self.peak:
            self.peak, self.held, self.blocked = ev.running, 0, False
        if ev.running == self.peak and room:
            self.held += 1
        if (
            last is not None
            and room
            and last.running == self.peak
            and self._room(last, settings)
            and ev.waiting is not None
            and ev.waiting >= (last.waiting or 0)
            and ev.prompt_tps == 0
            and (ev.generation_tps or 0) > 0
        ):
            self.blocked = True

    def observed_cap(self) -> tuple[int, str] | None:
        """The sequence cap the stats show (one engine's), and how they show it; None when they do not."""
        if self.peak is None or self.engines & (self.engines - 1):
            return None
        # every sample with requests waiting held at the one peak
        if self.held >= 3 and self.held == self.waited:
            return (
                self.peak,
                f"Running held at {self.peak} in all {self.held} samples in which requests waited",
            )
        if self.blocked:
            return self.peak, (
                f"Running peaked at {self.peak} while requests waited, and in the next interval no request was "
                "admitted (Waiting did not fall, no prompt tokens, generation going on)"
            )
        return None


def _waiting_span(
    df: pd.DataFrame | None, full_pct: float, *, full: bool
) -> tuple[datetime | None, datetime | None]:
    """When requests waited with the KV cache full (``full``: usage ≥ ``full_pct``) or with room."""
    if df is None or not {"waiting", "kv_usage_pct"} <= set(df.columns):
        return None, None
    kv = df["kv_usage_pct"]
    m = (df["waiting"] > 0) & ((kv >= full_pct) if full else (kv < full_pct))
    return _when(df, m) if len(m) else (None, None)


def queue_bound(c: Context) -> list[Finding]:
    """Requests wait: because the KV cache is full (memory-bound) or while it has room (seqs/prefill)."""
    s, w, df, cfg = c.summary, c.state(Waiting), c.frame, c.config
    out = []
    if w.while_full:
        a, b = _waiting_span(df, c.settings.kv_queue_full_pct, full=True)
        out.append(
            Finding(
                id=FindingId.QUEUE_MEMORY_BOUND,
                severity="warning",
                title=("Queue grows" if w.rises else "Requests wait")
                + " while the KV cache is full (memory-bound)",
                evidence=(
                    f"{w.while_full} stats samples had requests waiting (max {s.max_waiting}) while KV usage "
                    f"was ≥ {c.settings.kv_queue_full_pct:.0f}%: admission is limited by KV-cache memory, not by --max-num-seqs{_span(a, b)}"
                ),
                start=a,
                end=b,
                where=_where(s),
                data={"samples": w.while_full, "max_waiting": s.max_waiting},
            )
        )
    if w.with_room >= 2 or (w.with_room and s.samples < 4):
        a, b = _waiting_span(df, c.settings.kv_queue_full_pct, full=False)
        cap, seen = cfg.max_num_seqs, None
        if cap is None and (seen := w.observed_cap()) is not None:
            cap = seen[0]  # read from the stats: the log does not state the flag
        at_cap = cap is not None and s.max_running is not None and s.max_running >= cap
        if at_cap and cap is not None:
            how = f"Running at the --max-num-seqs cap of {cap}"
            if seen is not None:
                how = (
                    f"{seen[1]}, the KV cache under {c.settings.seq_cap_kv_pct:.0f}%: the sequence cap in force, "
                    f"read from the stats (--max-num-seqs is not in the log, its value here is the {cap} observed)"
                )
            out.append(
                Finding(
                    id=FindingId.QUEUE_SEQ_BOUND,
                    severity="warning",
                    title=("Queue grows" if w.rises else "Requests wait")
                    + " while the KV cache has room: bound by --max-num-seqs",
                    evidence=(
                        f"{w.with_room} stats samples had requests waiting (max {s.max_waiting}) with KV usage "
                        f"< {c.settings.kv_queue_full_pct:.0f}% and {how}{_span(a, b)}"
                    ),
                    start=a,
                    end=b,
                    where=_where(s),
                    data={
                        "samples": w.with_room,
                        "max_num_seqs": cap,
                        "cap_from": "stats" if seen else "config",
                    },
                )
            )
        else:
            out.append(
                Finding(
                    id=FindingId.QUEUE_PREFILL_BOUND,
                    severity="info",
                    title=("Queue grows" if w.rises else "Requests wait")
                    + " while the KV cache has room: bound by prefill or --max-num-seqs",
                    evidence=(
                        f"{w.with_room} stats samples had requests waiting (max {s.max_waiting}) with KV usage < {c.settings.kv_queue_full_pct:.0f}% "
                        f"and Running up to {s.max_running}"
                        + (f" (below --max-num-seqs {cap})" if cap else " (--max-num-seqs unknown)")
                        + _span(a, b)
                    ),
                    start=a,
                    end=b,
                    where=_where(s),
                    data={"samples": w.with_room, "max_num_seqs": cap},
                )
            )
    return out


def too_many_seqs(c: Context) -> list[Finding]:
    """Generation throughput falls while Running rises: too many sequences share the batch.

    A stats line's throughput averages the interval since the previous line, its Running is the
    count at the line's moment: where Running changed more than twofold between the two (a round of
    load starting or draining), the interval's concurrency is unknown and the sample is left out —
    else the drain's last line ("Running: 1" after an interval at 8) reads as a peak at 1."""
    df = c.frame
    if df is None or not {"generation_tps", "running"} <= set(df.columns):
        return []
    d = df[["generation_tps", "running"]].dropna()
    prev = d["running"].shift(1)
    steady = prev.isna() | ((d["running"] <= 2 * prev) & (prev <= 2 * d["running"]))
    d = d[(d["running"] > 0) & (d["generation_tps"] > 0) & steady]
    if len(d) < 6 or d["running"].nunique() < 3:
        return []
    rho = d["running"].rank().corr(d["generation_tps"].rank())
    if not (rho < -0.5):
        return []
    best = d.loc[d["generation_tps"].idxmax()]
    if isinstance(best, pd.DataFrame):
        best = best.iloc[0]
    top = d[d["running"] >= d["running"].quantile(0.8)]
    if top["generation_tps"].mean() > 0.8 * best["generation_tps"]:
        return []
    return [
        Finding(
            id=FindingId.TOO_MANY_SEQS,
            severity="warning",
            title="More running sequences, less throughput",
            evidence=(
                f"generation throughput falls as Running rises (rank correlation {rho:.2f} over {len(d)} samples): "
                f"peak {best['generation_tps']:.1f} tokens/s at {int(best['running'])} running, "
                f"{top['generation_tps'].mean():.1f} tokens/s at ≥ {int(top['running'].min())} running"
            ),
            where=_where(c.summary),
            data={
                "rho": round(float(rho), 3),
                "best_running": int(best["running"]),
                "best_tps": float(best["generation_tps"]),
            },
        )
    ]


def throughput_collapse(c: Context) -> list[Finding]:
    """Generation throughput falls far below its peak while requests are still running."""
    df = c.frame
    if df is None or not {"generation_tps", "running"} <= set(df.columns):
        return []
    d = df[["generation_tps", "running"]].dropna()
    d = d[d["running"] > 1]
    if len(d) < 4:
        return []
    peak = d["generation_tps"].cummax()
    run_at_peak = d["running"].where(d["generation_tps"] == peak).ffill()
    m = (d["generation_tps"] < c.settings.collapse_ratio * peak) & (d["running"] >= run_at_peak) & (peak > 0)
    if m.any() and isinstance(d.index, pd.DatetimeIndex):  # a wedged engine is engine_stuck's incident
        pad = 2.0 * stuck.normal_interval_s(c, df)
        m &= ~pd.Series(
            stuck.explains(c, [t.to_pydatetime() for t in d.index], pad), index=d.index, dtype=bool
        )
    if m.sum() < 2:
        return []
    a, b = _when(d, m)
    low = d.loc[m, "generation_tps"].min()
    return [
        Finding(
            id=FindingId.THROUGHPUT_COLLAPSE,
            severity="warning",
            title="Generation throughput collapsed under load",
            evidence=(
                f"in {int(m.sum())} samples generation throughput fell to {low:.1f} tokens/s, under "
                f"{c.settings.collapse_ratio:.0%} of its earlier peak {peak.max():.1f}, while as many requests were "
                f"running{_span(a, b)}"
            ),
            start=a,
            end=b,
            where=_where(c.summary),
            data={"min_tps": float(low), "peak_tps": float(peak.max())},
        )
    ]


# ---------------------------------------------------------------- the rules

QUEUE = Rule(
    family="batch and queue",
    detect=queue_bound,
    docs=(
        Doc(
            FindingId.QUEUE_MEMORY_BOUND,
            "warning",
            Section.KV_PRESSURE,
            alert="VLLMQueueBacklog",
            evidence="requests waiting while KV ≥ `kv_queue_full_pct`",
            advice="the KV plan below",
            settings=("kv_queue_full_pct",),
        ),
        Doc(
            FindingId.QUEUE_SEQ_BOUND,
            "warning",
            Section.BATCH,
            alert="VLLMQueueBacklog",
            evidence=(
                "requests waiting with KV room while Running sits at `--max-num-seqs`; where the log does not "
                "state it, the cap the stats show: Running held at its peak while requests wait with KV < "
                "`seq_cap_kv_pct` in every sample (3+), or an interval at the peak admitting none"
            ),
            advice=(
                "`--max-num-seqs` = running + waiting seen in one stats sample, at least × `seq_step_min_factor`, "
                "in one step where the KV room per request is measured too (else at most × "
                "`seq_step_max_factor`); where `seq_bound_kv_share` (90%) of the KV cache holds fewer at the "
                "measured request length (KV per running request from the stats lines, else the /metrics mean), "
                "the step carries the KV growth it needs (`--kv-cache-memory-bytes`, else "
                "`--gpu-memory-utilization`); without such a lever, as many as the cache holds, if that is at "
                "least the smallest step"
            ),
        ),
        Doc(
            FindingId.QUEUE_PREFILL_BOUND,
            "info",
            Section.BATCH,
            alert="VLLMQueueBacklog",
            evidence="requests waiting with KV room, Running below the cap",
            advice=(
                "`--max-num-batched-tokens` = the prompts of the requests seen at once (running + waiting × "
                "mean prompt), at least × 2, at most vLLM's default for the release and hardware (else × 2) "
                "and `--max-num-seqs` × `--max-model-len`; a note when a step already takes them; its cost: "
                "inter-token latency rises for the running requests"
            ),
            versions="V1 / chunked prefill",
            settings=("kv_queue_full_pct",),
        ),
    ),
    settings=(
        "kv_queue_full_pct",
        "seq_cap_kv_pct",
        "seq_bound_kv_share",
        "seq_step_min_factor",
        "seq_step_max_factor",
    ),
    needs=("stats",),
    states=(Waiting,),
    levers=(
        KV_PLAN,
        Lever(41, seqs.seq_bound, answers=(FindingId.QUEUE_SEQ_BOUND,)),
        PREFILL,
        Lever(
            60,
            sched.queue_bound,
            answers=(FindingId.QUEUE_MEMORY_BOUND, FindingId.QUEUE_SEQ_BOUND, FindingId.QUEUE_PREFILL_BOUND),
        ),
    ),
)


TOO_MANY_SEQS = Rule(
    family="batch and queue",
    detect=too_many_seqs,
    docs=(
        Doc(
            FindingId.TOO_MANY_SEQS,
            "warning",
            Section.BATCH,
            evidence=(
                "generation throughput falls as Running rises (stats lines where Running changed "
                "more than twofold since the previous one are left out: their throughput averages"
                " an interval of unknown concurrency)"
            ),
            advice=(
                "`--max-num-seqs` = Running at peak throughput; beside a preempting cache whose KV plan changed a "
                "flag, a note instead (measure after that one change)"
            ),
        ),
    ),
    needs=("stats",),
    levers=(Lever(40, seqs.fewer_seqs, answers=(FindingId.TOO_MANY_SEQS,)),),
)


THROUGHPUT_COLLAPSE = Rule(
    family="batch and queue",
    detect=throughput_collapse,
    docs=(
        Doc(
            FindingId.THROUGHPUT_COLLAPSE,
            "warning",
            Section.BATCH,
            evidence="throughput < `collapse_ratio` × peak with as many running",
            advice="with KV pressure: the KV plan; alone: a note (look outside the flags)",
            note=(
                "throughput fell with as many requests running, with no KV pressure seen: look "
                "outside the launch flags (a long request, host contention, thermal throttling) "
                "before changing them"
            ),
        ),
    ),
    settings=("collapse_ratio",),
    needs=("stats",),
)
