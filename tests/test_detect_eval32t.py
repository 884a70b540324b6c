"""The misses of issue 32's eval32t blind set (tests/data/eval32t/RESULTS.md), each on its real excerpt. Sources in
tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.failures.kinds import FailureKind
from observe.parse import envelope
from observe.parse.envelope import Ctx
from observe.parse.failtypes import RunState
from observe.parse.failures import failure
from tests.diagnosekit import critical
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data" / "eval32t"


def test_a_colour_code_does_not_eat_a_logger_file_named_m() -> None:
    """(023: vllm-gaudi's Worker_TP6 ERROR records, each behind literal '^[[1;36m(Worker_TP6 pid=142964)^[[0;0m'
    and '[multiproc_executor.py:671]', a traceback through compile_or_warm_up_model -> warmup_model, cut): the
    colour-code pattern took a bare '[m' for a remnant, so '[multiproc_executor.py:671]' lost its '[m' and the
    record its logger: nothing was read. A remnant without ESC needs its digits; with ESC (or '^[', '←[') '[m' is
    still a reset."""
    line = (DATA / "023.log").read_text().splitlines()[1]
    clean = envelope.strip_ansi(line)
    assert clean.startswith("(Worker_TP6 pid=142964) ERROR") and "[multiproc_executor.py:671]" in clean, clean
    assert envelope.strip_ansi("\x1b[mA [metrics.py:1] ^[[m[0m") == "A [metrics.py:1] "
    d = _diagnose(DATA / "023.log")
    crit = critical(d)
    assert crit and crit[0]["id"] in ("engine_startup_failed", "engine_error"), d["findings"]
    assert crit[0]["data"]["phase"] == "startup"


def test_a_chat_template_error_is_one_requests_error() -> None:
    """(016: V1 0.10.2, '[chat_utils.py:1475] An error occurred in `transformers` while applying chat template' and
    its traceback into render_jinja_template): apply_hf_chat_template logs that with logger.exception and raises a
    ValueError the server answers with an error response (0.10.1 chat_utils.py:1305, serving_chat.py:243) — one
    request's error, not the engine's. 0.32's renderers/mistral.py logs the same for `mistral_common`."""
    d = _diagnose(DATA / "016.log")
    assert not critical(d), d["findings"]
    assert "engine_error" not in {f["id"] for f in d["findings"]}
    for lib in ("transformers", "mistral_common"):
        msg = f"An error occurred in `{lib}` while applying chat template"
        f = failure(msg, Ctx("t", 1, level="ERROR"), RunState(False, False))
        assert f is not None and f.kind == FailureKind.REQUEST_ERROR, f


def test_uvicorns_asgi_exception_after_a_500_is_a_failed_request() -> None:
    """(005: V0 ~0.4.2 CPU, 'Aborted request', POST /v1/completions 500, 'ERROR:    Exception in ASGI application'
    and a traceback cut in uvicorn's middleware): uvicorn logs that for an exception out of the app (starlette's
    ServerErrorMiddleware answered 500 first): a request failed in the server while serving, critical."""
    d = _diagnose(DATA / "005.log")
    crit = critical(d)
    assert crit and crit[0]["id"] == "engine_error" and crit[0]["data"]["phase"] == "serving", d["findings"]
    assert "Exception in ASGI application" in crit[0]["evidence"]


def test_a_client_gone_under_the_asgi_record_stays_quiet() -> None:
    """The same record over a client's disconnect is not a failure: eval32k 014 (starlette's CancelledError after
    a 200) keeps no finding; a cut exception line under starlette's listen_for_disconnect (eval32m 018's shape) is
    a stop too."""
    d = _diagnose(DATA.parent / "eval32k" / "014.log")
    assert not [f for f in d["findings"] if f["severity"] in ("critical", "warning")], d["findings"]
