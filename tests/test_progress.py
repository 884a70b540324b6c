"""observe.metrics.progress.stuck: the one "no progress" rule shared by detect, the sidecar, top and the alert."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from observe.metrics.progress import Point, Stuck, from_scrape, stuck
from observe.metrics.scrape import parse_text
from observe.settings import Settings

T0 = datetime(2026, 1, 1, 12, 0, 0)


def _pts(rows: list[tuple[float, float | None, float | None, float | None]]) -> list[Point]:
    return [Point(T0 + timedelta(seconds=s), r, w, tok) for s, r, w, tok in rows]


def test_flat_counter_with_requests_in_flight_is_stuck() -> None:
    pts = _pts([(0, 2, 0, 100), (10, 2, 1, 150), (20, 2, 3, 150), (200, 2, 3, 150), (250, 2, 4, 150)])
    got = stuck(pts, after_s=180)
    assert got == Stuck(
        since=T0 + timedelta(seconds=10), until=T0 + timedelta(seconds=250), seconds=240, running=2, waiting=4
    )


def test_waiting_alone_counts_as_in_flight() -> None:
    pts = _pts([(0, 0, 5, 10), (100, 0, 5, 10), (200, 0, 5, 10)])
    got = stuck(pts, after_s=180)
    assert got is not None and got.waiting == 5 and got.running == 0 and got.seconds == 200


def test_counter_moving_is_not_stuck() -> None:
    pts = _pts([(0, 2, 0, 100), (100, 2, 0, 101), (200, 2, 0, 102), (300, 2, 0, 103)])
    assert stuck(pts, after_s=180) is None


def test_a_move_at_the_end_ends_the_stretch() -> None:
    pts = _pts([(0, 2, 0, 100), (300, 2, 0, 100), (310, 2, 0, 120)])
    assert stuck(pts, after_s=180) is None


def test_idle_engine_is_not_stuck() -> None:
    pts = _pts([(0, 0, 0, 100), (100, 0, 0, 100), (200, 0, 0, 100), (400, 0, 0, 100)])
    assert stuck(pts, after_s=180) is None
    # idle in the middle splits the stretch: neither half is long enough
    pts = _pts([(0, 1, 0, 100), (150, 1, 0, 100), (160, 0, 0, 100), (170, 1, 0, 100), (300, 1, 0, 100)])
    assert stuck(pts, after_s=180) is None


def test_counter_reset_ends_a_stretch() -> None:
    # flat at 500 for 200 s, then the counter drops (a restart) and stays flat for only 100 s
    pts = _pts([(0, 1, 0, 500), (200, 1, 0, 500), (210, 1, 0, 0), (310, 1, 0, 0)])
    assert stuck(pts, after_s=180) is None
    got = stuck(pts, after_s=90)
    assert got is not None and got.since == T0 + timedelta(seconds=210) and got.seconds == 100


def test_shorter_than_after_s_is_not_stuck() -> None:
    pts = _pts([(0, 3, 2, 100), (179, 3, 2, 100)])
    assert stuck(pts, after_s=180) is None
    assert stuck(pts, after_s=179) is not None


def test_unknown_counter_is_never_no_progress() -> None:
    assert stuck(_pts([(0, 2, 0, None), (300, 2, 0, None)]), after_s=180) is None
    # an unknown point in the middle breaks the stretch
    pts = _pts([(0, 2, 0, 7), (100, 2, 0, None), (200, 2, 0, 7), (250, 2, 0, 7)])
    assert stuck(pts, after_s=180) is None


def test_empty_and_single_point() -> None:
    assert stuck([], after_s=180) is None
    assert stuck(_pts([(0, 1, 0, 5)]), after_s=180) is None


def test_setting_default_and_validation() -> None:
    import pytest

    from observe.errors import ConfigError
    from observe.settings import from_mapping

    assert Settings().stuck_after_s == 180.0
    assert from_mapping({"stuck_after_s": 60}).stuck_after_s == 60
    with pytest.raises(ConfigError):
        from_mapping({"stuck_after_s": 0})


def test_stretches_finds_every_past_incident() -> None:
    from observe.metrics.progress import stretches

    pts = _pts(
        [
            (0, 2, 0, 100),
            (200, 2, 0, 100),  # flat 200 s: one
            (210, 2, 0, 150),
            (220, 0, 0, 150),  # idle
            (230, 1, 0, 150),
            (300, 1, 0, 150),  # flat 70 s: too short
            (310, 1, 0, 160),
            (320, 1, 2, 160),
            (600, 1, 2, 160),  # flat 280 s, trailing: two
        ]
    )
    got = stretches(pts, after_s=180)
    assert [(g.since, g.seconds) for g in got] == [
        (T0, 200),
        (T0 + timedelta(seconds=310), 290),
    ]
    assert got[-1] == stuck(pts, after_s=180)
    assert stretches(pts, after_s=300) == []


def test_a_metrics_read_is_a_point_of_prompt_plus_generation_tokens() -> None:
    """progress.from_scrape: the one reading of a /metrics read as progress (sidecar, top, diagnose)."""
    text = (Path(__file__).parent / "data" / "metrics" / "metrics-normal-8.txt").read_text()
    at = datetime(2026, 1, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    p = from_scrape(parse_text(text, at=at))
    assert p.t == T0 and p.t.tzinfo is None  # naive UTC, from the read's own stamp
    assert (p.running, p.waiting) == (32.0, 16.0)
    assert p.tokens == 661107.0 + 541124.0
    # no stamp on the read: the caller's time; no generation counter: tokens unknown, never 0
    bare = parse_text(
        'vllm:num_requests_running{model_name="m"} 2\nvllm:prompt_tokens_total{model_name="m"} 9\n'
    )
    assert bare.at is None
    q = from_scrape(bare, datetime(2026, 1, 1, 12, 0, tzinfo=UTC))
    assert q.t == T0 and q.running == 2.0 and q.waiting is None and q.tokens is None
    with pytest.raises(ValueError):
        from_scrape(bare)
