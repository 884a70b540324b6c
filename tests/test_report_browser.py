"""The HTML report in a real browser (Debian `chromium`, headless): the plots render, and a hostile
log line does not run.

Two checks, each with a control that proves the check can fail:
- screenshot: the report with timelines has far more ink, and far more pixels of the series
  colours, than the same report whose instances have no timeline; kept under artifacts/.
- DOM dump: the hostile payload would, if it ran, rename the page and add <div id="pwned">; a
  deliberately unsafe page with the same payload shows both in the dump, the report neither.
"""

from __future__ import annotations

import html as htmlmod
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from observe.model import EngineConfig, Finding, Recommendation
from observe.report import html as report_html
from tests.reportdata import Diag, normal_instance, saturated_instance

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian package `chromium` is not installed")

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
TITLE = "observe — vLLM diagnosis"
# If either ran, the DOM dump would show the new title and a <div id="pwned">.
RUN = "document.title='PWNED';var d=document.createElement('div');d.id='pwned';document.body.appendChild(d)"
HOSTILE_SCRIPT = f"<script>{RUN}</script>"
HOSTILE_IMG = f'<img src=x onerror="{RUN}">'


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Run headless Chromium with a throw-away profile; no network is needed by the page."""
    cmd = [
        CHROMIUM,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",
        "--no-first-run",
        "--disable-extensions",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


def screenshot(tmp_path: Path, page: Path, png: Path) -> None:
    chromium(tmp_path, f"--screenshot={png}", "--window-size=1280,2400", page.as_uri())
    assert png.exists() and png.stat().st_size > 0


def decode_png(data: bytes) -> tuple[int, int, list[bytes], int]:
    """(width, height, rows, bytes per pixel) of an 8-bit RGB/RGBA PNG, with zlib + struct only."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + n]
        pos += 12 + n
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
        elif typ == b"IDAT":
            idat.append(body)
        elif typ == b"IEND":
            break
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(h):
        off = y * (stride + 1)
        f = raw[off]
        line = bytearray(raw[off + 1 : off + 1 + stride])
        if f == 1:  # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:  # Up
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:  # Average
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:  # Paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows, bpp


def ink(png: Path, colors: tuple[str, ...] = ()) -> tuple[int, int]:
    """(non-white pixels, pixels within 40 of one of ``colors``) in the page's content column."""
    w, h, rows, bpp = decode_png(png.read_bytes())
    targets = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in colors]
    nonwhite = colored = 0
    for row in rows:
        for x in range(0, w * bpp, bpp * 2):  # every other pixel is plenty for counting
            r, g, b = row[x], row[x + 1], row[x + 2]
            if r < 235 or g < 235 or b < 235:
                nonwhite += 1
                if any(abs(r - tr) + abs(g - tg) + abs(b - tb) < 40 for tr, tg, tb in targets):
                    colored += 1
    return nonwhite, colored


def hostile_diag() -> Diag:
    """Two instances with real timelines; the first one's log-derived strings are hostile."""
    inst = saturated_instance(name=f"gpu-node {HOSTILE_IMG}")
    inst.config = EngineConfig(
        model=HOSTILE_SCRIPT, version="0.20.0", engine="v1", flags={"--served-model-name": HOSTILE_IMG}
    )
    f = inst.findings[0]
    inst.findings = [
        Finding(
            f.id,
            f.severity,
            f"KV cache saturated {HOSTILE_SCRIPT}",
            f"{f.evidence} {HOSTILE_IMG}",
            f.start,
            f.end,
            where=f.where,
        )
    ]
    inst.recommendations = [Recommendation("--max-num-seqs", None, 16, HOSTILE_SCRIPT, (f.id,), HOSTILE_IMG)]
    inst.command = f"vllm serve '{HOSTILE_SCRIPT}' --served-model-name '{HOSTILE_IMG}' --max-num-seqs 16"
    return Diag([inst, normal_instance()], unreadable=[{"path": HOSTILE_IMG, "reason": HOSTILE_SCRIPT}])


def test_plots_render_in_chromium(tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    diag = hostile_diag()
    page = ARTIFACTS / "report.html"
    page.write_text(report_html.render_html(diag), encoding="utf-8")
    shot = ARTIFACTS / "report.png"
    screenshot(tmp_path, page, shot)

    # control: the same report without timelines (findings, tables and command stay)
    for inst in diag.instances:
        inst.frame = None
    bare = tmp_path / "bare.html"
    bare.write_text(report_html.render_html(diag), encoding="utf-8")
    bare_shot = tmp_path / "bare.png"
    screenshot(tmp_path, bare, bare_shot)

    line_colors = ("#2f6fb3", "#3a9d5d")  # the series colours of throughput/running/KV
    with_plots, plot_pixels = ink(shot, line_colors)
    without, bare_pixels = ink(bare_shot, line_colors)
    assert plot_pixels > 1500, plot_pixels
    assert plot_pixels > 10 * max(bare_pixels, 1), (plot_pixels, bare_pixels)
    assert with_plots > without + 50_000, (with_plots, without)  # shaded bands, grids, axes


def test_hostile_log_text_does_not_run_in_chromium(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(report_html.render_html(hostile_diag()), encoding="utf-8")
    dom = chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert re.search(r"<title>(.*?)</title>", dom).group(1) == TITLE
    assert 'id="pwned"' not in dom
    assert "<script" not in dom.lower() and "<img" not in dom.lower()
    assert htmlmod.escape(HOSTILE_SCRIPT, quote=False) in dom  # shown as text

    # control: the same payload on a page that does not escape it runs and shows in the dump,
    # so the checks above would catch an escaping bug
    unsafe = tmp_path / "unsafe.html"
    unsafe.write_text(
        f"<!DOCTYPE html><html><head><title>{TITLE}</title></head><body><p>{HOSTILE_IMG}</p>"
        f"<p>{HOSTILE_SCRIPT}</p></body></html>",
        encoding="utf-8",
    )
    dom = chromium(tmp_path, "--dump-dom", unsafe.as_uri()).stdout
    assert re.search(r"<title>(.*?)</title>", dom).group(1) == "PWNED"
    assert 'id="pwned"' in dom
