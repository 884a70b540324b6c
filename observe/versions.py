"""vLLM versions: version strings → comparable tuples (one parser for the advisor and the capacity
model), and the range of releases a log without a banner can come from (``infer_range``), which
``available`` answers "is this flag valid here?" against: yes, no, or unknown."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


_PARSED: dict[str, tuple[int, int, int] | None] = {}  # the answers so far (a log names few versions)


#: "0.1.devN+g<hash>": setuptools-scm's fallback for a checkout with no release tag (a fork or shallow clone built from
#: source; vLLM's banner printed no version before 0.4.0, so no 0.1 release prints one): the release is unknown
_UNTAGGED = re.compile(r"v?0\.1\.dev\d+", re.ASCII)


def parse_version(v: str | None) -> tuple[int, int, int] | None:
    """'0.6.4.post1' / 'v0.11.0' / '~0.10.2 (V1)' / '0.32.0+cpu' → (major, minor, patch); None when unreadable or an
    untagged source build ('0.1.dev1+ge32459eea')."""
    if not v:
        return None
    text = str(v)
    if text in _PARSED:
        return _PARSED[text]
    m = _VERSION.search(text)
    got = None if m is None else (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    if _UNTAGGED.match(text.strip()):
        got = None  # setuptools-scm's version of a checkout without tags: a source build of any release
    if len(_PARSED) >= 1024:
        _PARSED.clear()
    _PARSED[text] = got
    return got


# ----------------------------------------------------------------------------- the era a log shows
Version = tuple[int, int, int]

#: a logger call site (file, line) → the releases whose source has that line there. Each row was
#: established by the corpus curator, who matched the line against vLLM's git history (the
#: tests/data/corpus/*.json "version" notes name the commits); forks print their own lines, so a
#: call site counts only together with the upstream log format it belongs to.
CALL_SITES: dict[tuple[str, int], tuple[Version, Version, str]] = {
    ("llm_engine.py", 649): ((0, 2, 3), (0, 2, 5), "corpus 015"),
    ("metrics.py", 161): ((0, 3, 0), (0, 3, 2), "corpus 001"),
    ("scheduler.py", 245): ((0, 4, 0), (0, 4, 0), "corpus 049"),
    ("metrics.py", 334): ((0, 4, 2), (0, 4, 2), "corpus 025"),
    ("model_runner.py", 692): ((0, 5, 3), (0, 5, 4), "corpus 037"),
    ("metrics.py", 449): ((0, 6, 4), (0, 6, 4), "corpus 009"),
    ("scheduler.py", 1558): ((0, 7, 0), (0, 7, 1), "corpus 011"),
    ("loggers.py", 127): ((0, 11, 0), (0, 11, 0), "corpus 017"),
    ("loggers.py", 257): ((0, 13, 0), (0, 15, 99), "corpus 057"),
    ("loggers.py", 271): ((0, 20, 0), (99, 0, 0), "corpus 003"),
}

#: what a log's shape bounds, with the source of each bound
_V1_FIRST: Version = (0, 7, 0)  # the V1 engine (vllm/v1, loggers.py) first shipped, opt-in, in 0.7.0
_V0_LAST: Version = (0, 10, 99)  # the V0 engine (engine/metrics.py, Pending/Swapped) was removed in 0.11.0
_V1_PREEMPTIONS: Version = (0, 11, 1)  # V1 stats "Preemptions: N" field (model.StatsSample.preemptions)
_THROUGHPUT_ONLY: tuple[Version, Version] = ((0, 1, 0), (0, 1, 2))  # one "Throughput:" field
_UNVERSIONED_LAST: Version = (
    0,
    3,
    3,
)  # the engine banner names its version from 0.4.0 (llm_engine.py, wheels)
_DP_ENGINE_CORE: Version = (0, 10, 2)  # "(EngineCore_DP0 pid=N)" process names (corpus 053, #22205)
#: the engine banner's fields before 0.2.6 added "enforce_eager=" (wheels 0.2.0 → 0.2.6; parse.banner)
_NO_EAGER_LAST: Version = (0, 2, 5)
#: V0's stats line logged by llm_engine.py itself (0.1.0 "Throughput:", 0.2.0 → 0.3.0 "Avg prompt
#: throughput:", wheels 0.2.0, 0.2.7, 0.3.0); 0.3.1 moved it to engine/metrics.py (wheels 0.3.1 → 0.10.1)
_ENGINE_LOGGED_STATS_LAST: Version = (0, 3, 0)


@dataclass(frozen=True)
class VersionRange:
    """The vLLM releases a log can come from: lo ≤ version ≤ hi (None: unbounded on that side),
    with the evidence for each bound. An exact version gives lo == hi."""

    lo: Version | None = None
    hi: Version | None = None
    evidence: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        return self.lo is not None or self.hi is not None

    def narrow(self, lo: Version | None, hi: Version | None, why: str) -> VersionRange:
        """This range cut to [lo, hi]; a bound that contradicts what is known already is ignored
        (a fork or a backport prints the unexpected), so the range never becomes empty."""
        new_lo = self.lo if lo is None or (self.lo is not None and lo <= self.lo) else lo
        new_hi = self.hi if hi is None or (self.hi is not None and hi >= self.hi) else hi
        if new_lo is not None and new_hi is not None and new_lo > new_hi:
            return self
        if (new_lo, new_hi) == (self.lo, self.hi):
            return self
        return VersionRange(new_lo, new_hi, self.evidence + (why,))

    def text(self) -> str:
        def v(t: Version) -> str:
            return ".".join(map(str, t))

        if self.lo is not None and self.lo == self.hi:
            return v(self.lo)
        if self.lo is not None and self.hi is not None and self.hi < (99, 0, 0):
            return f"{v(self.lo)}–{v(self.hi)}"
        if self.lo is not None:
            return f"≥ {v(self.lo)}"
        if self.hi is not None:
            return f"≤ {v(self.hi)}"
        return "unknown"


def infer_range(
    version: str | None,
    *,
    engine: str | None = None,
    stats_formats: Iterable[str] = (),
    clauses: Iterable[str] = (),
    call_sites: Iterable[tuple[str, int]] = (),
    processes: Iterable[str] = (),
    unversioned_banner: bool = False,
    stats_loggers: Iterable[str] = (),
    banner_without_eager: bool = False,
) -> VersionRange:
    """The releases a log can come from: its banner's version when it printed one, else what the
    line shapes bound (V0/V1 wording, stats clauses, logger call sites, process names, and the
    logger files of the stats lines: ``stats_loggers``; the banner's fields: ``banner_without_eager``)."""
    exact = parse_version(version)
    if exact is not None:
        return VersionRange(exact, exact, (f"version {version} printed",))
    r = VersionRange()
    if unversioned_banner:
        r = r.narrow(
            None, _UNVERSIONED_LAST, "'Initializing an LLM engine with config:' without '(vX)' (0.1.0–0.3.3)"
        )
    if banner_without_eager:
        r = r.narrow(None, _NO_EAGER_LAST, "engine banner without 'enforce_eager=' (0.2.6 added it)")
    fmts = set(stats_formats)
    cl = set(clauses)
    if "v1" in fmts or engine == "v1":
        r = r.narrow(_V1_FIRST, None, "V1 engine (first shipped in 0.7.0)")
    if "v0" in fmts and "v1" not in fmts:
        r = r.narrow(None, _V0_LAST, "V0 stats line (Pending/Swapped; V0 removed in 0.11.0)")
        if cl and cl <= {"throughput", "running", "swapped", "pending", "kv"} and "throughput" in cl:
            r = r.narrow(*_THROUGHPUT_ONLY, "single 'Throughput:' stats field (0.1.0–0.1.2)")
    if "preemptions" in cl:
        r = r.narrow(_V1_PREEMPTIONS, None, "V1 stats 'Preemptions:' field (0.11.1 →)")
    if any(p.startswith("EngineCore_DP") for p in processes):
        r = r.narrow(_DP_ENGINE_CORE, None, "EngineCore_DP<n> process name (0.10.2 →)")
    for site in sorted(set(call_sites)):
        row = CALL_SITES.get(site)
        if row is None:
            continue
        lo, hi, src = row
        upstream_v0 = site[0] in ("metrics.py", "llm_engine.py", "scheduler.py", "model_runner.py")
        if (upstream_v0 and "v1" in fmts) or (site[0] == "loggers.py" and "v0" in fmts):
            continue  # a call site of the other engine: a fork's line, not upstream's
        r = r.narrow(lo, hi, f"{site[0]}:{site[1]} call site ({src})")
    if "v0" in fmts and "v1" not in fmts and "llm_engine.py" in set(stats_loggers):
        r = r.narrow(None, _ENGINE_LOGGED_STATS_LAST, "V0 stats line logged by llm_engine.py (0.1.0–0.3.0)")
    return r


def available(rng: VersionRange | None, since: str | None, until: str | None = None) -> bool | None:
    """Whether a flag that exists from `since` (and before `until`, when it was removed) is valid for
    every release in rng: True, False (for none of them), or None (for some: unknown)."""
    lo_ok = parse_version(since) if since else None
    hi_gone = parse_version(until) if until else None
    if rng is None or not rng.known:
        return None
    lo, hi = rng.lo or (0, 0, 0), rng.hi or (99, 0, 0)
    yes_lo = lo_ok is None or lo >= lo_ok
    yes_hi = hi_gone is None or hi < hi_gone
    if yes_lo and yes_hi:
        return True
    no = (lo_ok is not None and hi < lo_ok) or (hi_gone is not None and lo >= hi_gone)
    return False if no else None
