"""A restarted Alertmanager must not page what an inhibition held back.

A restart forgets the alerts; Prometheus re-sends each firing alert within its resend delay, with
the startsAt of its episode. A group whose alerts started longer than group_wait ago flushes at once
(dispatch.go: "old enough for immediate flush"), so a target re-sent before its source is paged:
the engine exit of a launch that never started goes out beside VLLMEngineStartupFailed
(prometheus/alertmanager#4064). compose/render-and-run.sh starts Alertmanager with
--dispatch.start-delay (Alertmanager >= 0.30): nothing is sent until the re-sent alerts are all in.

Run on a real Alertmanager 0.33 (Debian unstable's, unpacked by tools/promtool3.sh) started through
the compose entrypoint script, the shipped config with test timings, a real webhook; the alerts of a
start-up failure re-sent as after a restart, the targets before their source (once a page went out,
or 3 s later). Both sides: without the delay the exit is paged (the fault, every time: the source is
not there yet); with it the start-up failure pages alone, and nothing reaches the webhook before the
source was re-sent."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import requests

from tests.services import alertmanager, alertmanager_config, newer_alertmanager, wait_until, webhook_receiver

AM = newer_alertmanager()


@pytest.fixture(autouse=True)
def _needs_alertmanager_0_30() -> None:
    if AM is None:
        if os.environ.get("CI") == "true":  # tools/test.sh fetches it: a CI run without it fails
            pytest.fail("tools/promtool3.sh put no Alertmanager with --dispatch.start-delay")
        pytest.skip("no Alertmanager >= 0.30 (run tools/promtool3.sh)")


def _resent(name: str, component: str, instance: str) -> dict:
    """An alert as Prometheus re-sends it: its episode began ten minutes ago."""
    ago = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 600))
    labels = {"alertname": name, "component": component, "instance": instance, "severity": "critical"}
    return {"labels": labels, "startsAt": ago}


def _after_restart(tmp: Path, delay: str) -> tuple[dict[str, list[str]], int]:
    """Instance → alert names paged, and how many deliveries came before the source was re-sent."""
    with webhook_receiver() as (hook, received):
        cfg = alertmanager_config(tmp, hook)
        env = {"AM_DISPATCH_START_DELAY": delay}
        with alertmanager(cfg, tmp, binary=AM or "", entrypoint_env=env) as am:
            targets = [
                _resent("VLLMDown", "vllm", "a:8000"),
                _resent("VLLMEngineCrashed", "vllm-logs", "a:8000"),
                _resent("VLLMDown", "vllm", "d:8000"),  # the control: a down with no cause known
            ]
            requests.post(am + "/api/v2/alerts", json=targets, timeout=5).raise_for_status()
            # another rule group's evaluation comes later: here once a page went out, or after 3 s
            # (well inside the 10 s delay, which counts from the process's start)
            until = time.monotonic() + 3.0
            while not received and time.monotonic() < until:
                time.sleep(0.05)
            before_source = len(received)
            source = [_resent("VLLMEngineStartupFailed", "vllm-logs", "a:8000")]
            requests.post(am + "/api/v2/alerts", json=source, timeout=5).raise_for_status()

            def paged() -> dict[str, list[str]]:
                out: dict[str, list[str]] = {}
                for payload in list(received):
                    for a in payload.get("alerts", []):
                        names = out.setdefault(a["labels"]["instance"], [])
                        if a["status"] == "firing" and a["labels"]["alertname"] not in names:
                            names.append(a["labels"]["alertname"])
                return out

            wait_until(
                lambda: "VLLMEngineStartupFailed" in paged().get("a:8000", []) and "d:8000" in paged(),
                40,
                what="the start-up failure's page and the control's",
            )
            time.sleep(2.0)  # group_wait 1 s: a page a flush still held would be in by now
            return paged(), before_source


def test_without_a_start_delay_a_restart_pages_what_a_start_up_failure_silenced(tmp_path: Path) -> None:
    got, early = _after_restart(tmp_path, "")  # "" leaves the flag out: Alertmanager's default, 0 s
    # the crash the start-up failure silences goes out as a second page (the down stays silenced by
    # the crash, re-sent in the same post)
    assert "VLLMEngineCrashed" in got["a:8000"], got
    assert early >= 1  # sent before the source was back


def test_with_the_start_delay_a_restart_pages_the_start_up_failure_alone(tmp_path: Path) -> None:
    got, early = _after_restart(tmp_path, "10s")
    assert got["a:8000"] == ["VLLMEngineStartupFailed"], got  # one cause, one page
    assert got["d:8000"] == ["VLLMDown"], got  # the control pages, after the delay
    assert early == 0
