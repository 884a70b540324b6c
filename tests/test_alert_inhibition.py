"""One cause, one page: the shipped Alertmanager config (compose/alertmanager.yml, rendered by
compose/render-and-run.sh, timings shortened) in a REAL Alertmanager, delivering to a webhook.

A launch that failed to start also makes VLLMDown fire and may count as an engine exit
(VLLMEngineCrashed): the webhook gets the start-up failure alone. A crash silences VLLMDown of the
same instance. A start-up failure or crash silences VLLMTargetMissing; a burn silences the queue
warning of its instance and model (an overload pages once). Other instances' pages still arrive (the controls, which also say
when the suppressed groups would have been sent: same route, same group_wait)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests
import yaml

from tests.services import alertmanager, alertmanager_config, have, wait_until, webhook_receiver

RULES = Path(__file__).resolve().parents[1] / "alerts" / "vllm-observe.rules.yml"
pytestmark = pytest.mark.skipif(
    not have("prometheus-alertmanager"), reason="prometheus-alertmanager not installed"
)


def _alert(name: str, component: str, instance: str, severity: str = "critical", **extra: str) -> dict:
    """No startsAt: Alertmanager stamps the receipt. A startsAt older than group_wait (these alerts
    are built before Alertmanager starts) flushes a new group at once, racing the inhibitor's own
    reading of the same post (dispatch.go 'old enough for immediate flush'): the CI run of stop 43
    paged VLLMDown and VLLMEngineCrashed beside a start-up failure so."""
    labels = {"alertname": name, "component": component, "instance": instance, "severity": severity, **extra}
    if not instance:  # VLLMTargetMissing: absent() has no instance
        del labels["instance"]
    return {"labels": labels}


def pages(am_config: str, tmp: Path, hook_url: str, received: list[dict]) -> dict[str, list[str]]:
    """Fire each fault's alerts into Alertmanager; return instance → alert names the webhook got."""
    fired = [
        # a start-up failure (KV cache too large): all three fire for vLLM a
        _alert("VLLMEngineStartupFailed", "vllm-logs", "a:8000"),
        _alert("VLLMEngineCrashed", "vllm-logs", "a:8000"),
        _alert("VLLMDown", "vllm", "a:8000"),
        # a crash (SIGKILL) and the outage while vLLM restarts: vLLM b
        _alert("VLLMEngineCrashed", "vllm-logs", "b:8000"),
        _alert("VLLMDown", "vllm", "b:8000"),
        # an OOM while the engine starts (capturing CUDA graphs): the start-up failure, the OOM and
        # the down of vLLM g; a control: an OOM while serving (h) pages
        _alert("VLLMEngineStartupFailed", "vllm-logs", "g:8000"),
        _alert("VLLMEngineOOM", "vllm-logs", "g:8000"),
        _alert("VLLMDown", "vllm", "g:8000"),
        _alert("VLLMEngineOOM", "vllm-logs", "h:8000"),
        # controls: a crash alone (c), a down alone (d)
        _alert("VLLMEngineCrashed", "vllm-logs", "c:8000"),
        _alert("VLLMDown", "vllm", "d:8000"),
        # no vLLM series at all (a's launch never served): the log-derived pages say why
        _alert("VLLMTargetMissing", "vllm", ""),
        # an overload: the burn page (its summary leads with the queue) and the queue warning of e;
        # a control: the queue warning alone (f)
        _alert("VLLMTTFTSLOBurnFast", "vllm", "e:8000", model_name="m"),
        _alert("VLLMQueueBacklog", "vllm", "e:8000", "warning", model_name="m"),
        _alert("VLLMQueueBacklog", "vllm", "f:8000", "warning", model_name="m"),
    ]
    with alertmanager(am_config, tmp=tmp) as am:
        requests.post(am + "/api/v2/alerts", json=fired, timeout=5).raise_for_status()

        def delivered() -> dict[str, list[str]]:
            out: dict[str, list[str]] = {}
            for payload in list(received):
                for a in payload.get("alerts", []):
                    if a["status"] == "firing":
                        names = out.setdefault(a["labels"].get("instance", "-"), [])
                        if a["labels"]["alertname"] not in names:
                            names.append(a["labels"]["alertname"])
            return out

        # the controls arrive only after their group_wait: any page the sources did not silence
        # (the same routes and timings) is in by then
        got = wait_until(
            lambda: (d := delivered()) and all(f"{x}:8000" in d for x in "abcdefgh") and d,
            30,
            what="the control pages at the webhook",
        )
        status = {
            (a["labels"]["alertname"], a["labels"].get("instance", "-")): a["status"]
            for a in requests.get(am + "/api/v2/alerts", timeout=5).json()
        }
    got["_suppressed"] = sorted(f"{n}@{i}" for (n, i), st in status.items() if st["state"] == "suppressed")
    return got


def test_a_start_up_failure_pages_once_and_a_crash_silences_down(tmp_path: Path) -> None:
    with webhook_receiver() as (hook_url, received):
        got = pages(alertmanager_config(tmp_path, hook_url), tmp_path, hook_url, received)
    assert got["a:8000"] == ["VLLMEngineStartupFailed"]  # one cause, one page
    assert sorted(got["b:8000"]) == ["VLLMEngineCrashed"]
    assert got["c:8000"] == ["VLLMEngineCrashed"] and got["d:8000"] == ["VLLMDown"]
    assert got["e:8000"] == ["VLLMTTFTSLOBurnFast"] and got["f:8000"] == ["VLLMQueueBacklog"]  # one page
    assert got["g:8000"] == ["VLLMEngineStartupFailed"] and got["h:8000"] == ["VLLMEngineOOM"]
    assert "-" not in got  # VLLMTargetMissing
    assert got["_suppressed"] == [
        "VLLMDown@a:8000",
        "VLLMDown@b:8000",
        "VLLMDown@g:8000",
        "VLLMEngineCrashed@a:8000",
        "VLLMEngineOOM@g:8000",
        "VLLMQueueBacklog@e:8000",
        "VLLMTargetMissing@-",
    ]


def test_a_second_crash_after_one_resolved_under_a_start_up_failure_pages(tmp_path: Path) -> None:
    """A crash pages; the restart fails (the start-up failure silences the crash); the crash alert
    resolves (its 5 m window) while silenced; the start-up failure resolves (a launch serves); the
    engine is killed again: that second crash must page. Alertmanager sends no resolution for an
    alert that resolved while inhibited, so the fix is in the rule: each crash is its own alert (its
    crash label is the crash count, the rule's value), as the committed rule says."""
    rules = yaml.safe_load(RULES.read_text())["groups"][0]["rules"]
    crashed = [r for r in rules if r.get("alert") == "VLLMEngineCrashed"]
    assert crashed and crashed[0]["labels"].get("crash") == "{{ $value }}", crashed
    assert crashed[0]["expr"].startswith("max by ("), crashed[0]["expr"]  # the value is the count

    def post(am: str, name: str, starts: str, ends: str, crash: str = "1") -> None:
        a = _alert(name, "vllm-logs", "a:8000")
        a["labels"]["cause"] = "killed"
        if name == "VLLMEngineCrashed":
            a["labels"]["crash"] = crash
        a.update(startsAt=starts, endsAt=ends)
        requests.post(am + "/api/v2/alerts", json=[a], timeout=5).raise_for_status()

    def at(dt: float = 0.0) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + dt))

    with webhook_receiver() as (hook_url, received):
        with alertmanager(alertmanager_config(tmp_path, hook_url), tmp=tmp_path) as am:
            crash1, failed = at(), at(2)
            post(am, "VLLMEngineCrashed", crash1, at(3600))
            wait_until(lambda: received, 30, what="the first crash page")
            time.sleep(2)
            post(am, "VLLMEngineStartupFailed", failed, at(3600))
            time.sleep(3)
            post(am, "VLLMEngineCrashed", crash1, at())  # resolved while inhibited
            time.sleep(3)
            post(am, "VLLMEngineStartupFailed", failed, at())
            time.sleep(3)
            post(am, "VLLMEngineCrashed", at(), at(3600), crash="2")  # the second crash

            def crash_pages() -> int:
                return sum(
                    1
                    for p in list(received)
                    for a in p.get("alerts", [])
                    if a["labels"]["alertname"] == "VLLMEngineCrashed" and a["status"] == "firing"
                )

            time.sleep(5)
            assert crash_pages() >= 2, [
                [(a["labels"]["alertname"], a["status"]) for a in p["alerts"]] for p in received
            ]
