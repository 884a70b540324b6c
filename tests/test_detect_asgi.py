"""uvicorn's "Exception in ASGI application" after a 500, its traceback cut before the cause: where the request failed
decides how bad it is. Two blind labels on the shape disagreed until this was read: eval32t 005 (V0 ~0.4.2: the engine
logs "Aborted request cmpl-…" just above the 500, labelled failing) and eval32aa 014 (V1 ~0.9.2: the 500 and the record
alone, an unreachable image URL, labelled healthy). V0's generate aborts the request its handler's raise closed, V1's
does too ("Aborted request(s)"): with that line just above, the request failed inside the engine (critical); without
it, the handler raised in the HTTP layer before the engine had the request and the server went on (a warning, not
silence: one request failed)."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import diagnose

DATA = Path(__file__).parent / "data"


def _asgi(d: dict) -> dict:
    (f,) = [f for f in d["findings"] if f["id"] == "engine_error"]
    assert f["data"]["frame"] == "run_asgi", f
    return f


def test_an_asgi_500_the_engine_aborted_just_before_is_critical() -> None:
    f = _asgi(diagnose("eval32t/005.log"))
    assert f["severity"] == "critical" and "it failed inside the engine" in f["evidence"]


def test_an_asgi_500_with_no_abort_above_is_one_requests_warning() -> None:
    f = _asgi(diagnose("eval32aa/014.log"))
    assert f["severity"] == "warning" and "raised in the HTTP layer" in f["evidence"]


def test_an_abort_far_above_the_record_is_not_its_request(tmp_path: Path) -> None:
    """eval32t 005 with its abort ten lines further above (its access line repeated between): not the same request."""
    lines = (DATA / "eval32t" / "005.log").read_text(encoding="utf-8").splitlines(True)
    moved = tmp_path / "005-far.log"
    moved.write_text(lines[0] + lines[1] * 10 + "".join(lines[1:]), encoding="utf-8")
    assert _asgi(diagnose(moved))["severity"] == "warning"
