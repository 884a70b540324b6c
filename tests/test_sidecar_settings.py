"""config: the sidecar's settings from command-line strings; nonsense is one ConfigError."""

from __future__ import annotations

import pytest

from observe.errors import ConfigError
from observe.sidecar.config import SidecarSettings, parse_duration, parse_listen


@pytest.mark.parametrize(
    "text, secs",
    [
        ("1h", 3600),
        ("30m", 1800),
        ("1h30m", 5400),
        ("90s", 90),
        ("500ms", 0.5),
        ("2d", 172800),
        ("15", 15),
        ("0.25", 0.25),
        (5, 5.0),
    ],
)
def test_durations(text, secs) -> None:
    assert parse_duration(text) == secs


@pytest.mark.parametrize("text", ["", "h", "1x", "-5", "0", "1h 30m", "forever", "1h30"])
def test_bad_durations(text) -> None:
    with pytest.raises(ConfigError):
        parse_duration(text)


@pytest.mark.parametrize(
    "text, hp",
    [
        ("127.0.0.1:9400", ("127.0.0.1", 9400)),
        (":9400", ("127.0.0.1", 9400)),
        ("9401", ("127.0.0.1", 9401)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("[::1]:9400", ("::1", 9400)),
    ],
)
def test_listen(text, hp) -> None:
    assert parse_listen(text) == hp


@pytest.mark.parametrize("text", ["127.0.0.1:http", "1:70000", "[::1]9400"])
def test_bad_listen(text) -> None:
    with pytest.raises(ConfigError):
        parse_listen(text)


def test_from_cli_defaults_bind_loopback() -> None:
    s = SidecarSettings.from_cli(logs=["/var/log/vllm/*.log"], vllm_url="http://127.0.0.1:8000")
    assert (s.listen_host, s.listen_port, s.window, s.scrape_interval) == ("127.0.0.1", 9400, 3600.0, 15.0)
    assert s.instance_name == "http://127.0.0.1:8000"


def test_nothing_to_watch_and_bad_url() -> None:
    with pytest.raises(ConfigError, match="nothing to watch"):
        SidecarSettings()
    with pytest.raises(ConfigError, match="not an http"):
        SidecarSettings(vllm_url="ftp://x y")
