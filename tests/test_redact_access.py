"""Who may read /api/diagnosis: loopback by default, a bearer token when one is set, nobody when off;
/metrics and /healthz stay open whatever the mode."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests
from typer.testing import CliRunner

from observe.cli import app
from observe.errors import ConfigError
from observe.sidecar.config import SidecarSettings
from observe.sidecar.exporter import ExportState, Server, make_registry
from observe.sidecar.tokenfile import read_api_token

DOC = {"schema": "observe.diagnosis/v1", "instances": []}


def serve(access: str, token: str | None = None) -> Server:
    s = Server(
        make_registry(ExportState), port=0, diagnosis=lambda: DOC, diagnosis_access=access, token=token
    )
    s.start()
    return s


def test_token_is_required_when_set() -> None:
    s = serve("token", "s3cr3t-token")
    try:
        url = s.url + "/api/diagnosis"
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": "Basic s3cr3t-token"},
            {"Authorization": "Bearer s3cr3t-token-longer"},
        ):
            r = requests.get(url, headers=headers, timeout=5)
            assert r.status_code == 401 and r.headers["WWW-Authenticate"] == "Bearer", headers
            assert "instances" not in r.text
        r = requests.get(url, headers={"Authorization": "Bearer s3cr3t-token"}, timeout=5)
        assert r.status_code == 200 and r.json() == DOC
        assert requests.get(s.url + "/metrics", timeout=5).status_code == 200
        assert requests.get(s.url + "/healthz", timeout=5).status_code == 200
    finally:
        s.stop()


@pytest.mark.parametrize(("access", "code"), [("closed", 403), ("off", 404), ("open", 200)])
def test_closed_off_and_open(access: str, code: int) -> None:
    s = serve(access)
    try:
        r = requests.get(s.url + "/api/diagnosis", timeout=5)
        assert r.status_code == code
        assert ("instances" in r.text) == (code == 200)
        assert requests.get(s.url + "/metrics", timeout=5).status_code == 200
        assert requests.get(s.url + "/healthz", timeout=5).status_code == 200
    finally:
        s.stop()


@pytest.mark.parametrize(
    ("host", "mode", "token", "access", "warns"),
    [
        ("127.0.0.1", "auto", None, "open", False),
        ("::1", "auto", None, "open", False),
        ("localhost", "auto", None, "open", False),
        ("0.0.0.0", "auto", None, "closed", True),
        ("10.1.2.3", "auto", None, "closed", True),
        ("0.0.0.0", "auto", "tok-9f3a", "token", False),
        ("127.0.0.1", "auto", "tok-9f3a", "token", False),
        ("0.0.0.0", "public", None, "open", True),
        ("0.0.0.0", "public", "tok-9f3a", "token", False),
        ("0.0.0.0", "off", "tok-9f3a", "off", False),
        ("127.0.0.1", "off", None, "off", False),
    ],
)
def test_access_follows_listener_mode_and_token(host, mode, token, access, warns) -> None:
    s = SidecarSettings(logs=["x.log"], listen_host=host, api_diagnosis=mode, api_token=token)
    assert s.diagnosis_access == access
    assert (s.api_warning is not None) == warns
    if token:
        assert token not in repr(s)  # the token is kept out of the settings' repr


def test_token_from_file_or_environment(tmp_path: Path) -> None:
    f = tmp_path / "token"
    f.write_text("\n  abc123  \nsecond line\n")
    assert read_api_token(f, {}) == "abc123"
    assert read_api_token(None, {"OBSERVE_API_TOKEN": " xyz "}) == "xyz"
    assert read_api_token(None, {}) is None
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(ConfigError, match="is empty"):
        read_api_token(tmp_path / "empty", {})
    with pytest.raises(ConfigError, match="cannot read"):
        read_api_token(tmp_path / "missing", {})
    with pytest.raises(ConfigError, match="--api-diagnosis"):
        SidecarSettings(logs=["x.log"], api_diagnosis="open")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--api-diagnosis", "everyone"], "--api-diagnosis 'everyone'"),
        (["--api-token-file", "/nonexistent/token"], "cannot read"),
    ],
)
def test_sidecar_cli_bad_access_options_are_one_line(args: list[str], message: str) -> None:
    r = CliRunner().invoke(app, ["sidecar", "--log", "x.log", *args])
    assert r.exit_code != 0 and message in r.stderr
    assert "Traceback" not in r.stderr
