"""The capacity model against real KV-capacity observations (tests/data/capacity-vectors.json).

Each vector is what a vLLM engine printed for a GPU, model and set of flags (pasted logs and
vLLM's own unit tests, sources inside the file). Bytes/token must match exactly; KV tokens within
5% for dense single-GPU vectors with complete inputs; launches that failed must be predicted to
fail. The median |error| over every vector with a number is printed (docs/capacity.md quotes it).
"""

from __future__ import annotations

import re
import statistics

import pytest

from observe.capacity import bytes_per_token
from tests.capacitykit import (
    BY_ID,
    VECTORS,
    dense_single_complete,
    error_pct,
    failed,
    predict,
    reported_tokens,
    spec_of,
)


@pytest.mark.parametrize("v", [v for v in VECTORS if v.get("arch")], ids=lambda v: v["id"])
def test_bytes_per_token_exact(v):
    a = v["arch"]
    spec = spec_of(v)
    assert (spec.layers, spec.head_dim) == (a["layers"], a["head_dim"])
    got = bytes_per_token(
        spec,
        tp=v.get("tensor_parallel_size") or 1,
        kv_cache_dtype="fp8" if v.get("kv_dtype_bytes") == 1 else "auto",
    )
    want = v["prediction"].get("bytes_per_token_per_rank")
    if want is None:  # gpt-oss-120b: 2 (K,V) x 36 layers x 8 heads x 64 x 2 B, all layers
        want = 2 * a["layers"] * a["kv_heads"] * a["head_dim"] * v["kv_dtype_bytes"]
    assert got == want
    assert predict(v).bytes_per_token == want


@pytest.mark.parametrize("v", [v for v in VECTORS if dense_single_complete(v)], ids=lambda v: v["id"])
def test_dense_single_gpu_tokens_within_5pct(v):
    r = predict(v)
    assert r.basis == "estimated"
    assert abs(error_pct(v, r)) <= 5.0, (r.kv_cache_tokens, reported_tokens(v))


@pytest.mark.parametrize("v", [v for v in VECTORS if failed(v) and v.get("arch")], ids=lambda v: v["id"])
def test_failed_launches_are_predicted_to_fail(v):
    r = predict(v)
    assert not r.fits


@pytest.mark.parametrize(
    "v", [v for v in VECTORS if "OK" in str(v["reported"].get("outcome", ""))], ids=lambda v: v["id"]
)
def test_successful_launches_are_predicted_to_fit(v):
    assert predict(v).fits


def test_fit_errors_reproduce_vllms_estimate():
    # vLLM printed the estimated maximum model length; the formula gives it within 0.05%
    for vid in (
        "vllm-25350-fp8kv-qwen3-30b-a3b-class-221k-error",
        "vllm-34076-pp2-qwen3-coder-30b-a3b-fp8-error",
    ):
        v = BY_ID[vid]
        r = predict(v)
        assert r.basis == "measured"
        assert r.max_model_len_that_fits == v["prediction"]["estimated_max_model_len"]
        assert abs(error_pct(v, r)) < 0.1
        needed = float(re.search(r"\(([\d.]+) GiB KV cache is needed", v["reported"]["error"]).group(1))
        one_request = -(-v["max_model_len"] // 16) * 16 * r.bytes_per_token / 2**30
        assert round(one_request, 2) == needed


def test_vllm_unit_tests():
    r = predict(BY_ID["vllm-unittest-estimate-max-model-len-16383"])
    assert r.max_model_len_that_fits == 16383 and r.fits
    r = predict(BY_ID["vllm-unittest-max-concurrency-sliding1024"])
    assert r.max_concurrency == 3.0


def test_accounting_identity_pr14447():
    v = BY_ID["vllm-pr14447-rtx3090-util0.99-accounting"]
    r = predict(v)
    assert abs(r.available_kv_gib - v["reported"]["kv_cache_gib"]) < 0.01


def test_median_error_over_all_vectors(capsys):
    rows = []
    for v in VECTORS:
        if not v.get("arch") and "accounting" not in v["id"]:
            continue
        r = predict(v)
        e = error_pct(v, r)
        if e is not None:
            rows.append((v["id"], e, r.basis))
    med = statistics.median(abs(e) for _, e, _ in rows)
    est = [abs(e) for _, e, b in rows if b == "estimated"]
    with capsys.disabled():
        print(
            f"\ncapacity vectors: {len(rows)} with a reported number, median |error| {med:.2f}%; "
            f"{len(est)} predicted from GPU, flags and weights alone: median {statistics.median(est):.2f}%"
        )
        for vid, e, b in rows:
            print(f"  {e:+8.2f}%  {b:9s}  {vid}")
    assert len(rows) >= 12
    assert med < 5.0
