"""The classes of the blind set eval32ba fixed after its measurement (tests/data/eval32ba/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from observe.parse import hosted
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, by_id, critical, diagnose


def _failed(d: dict) -> bool:
    return bool(critical(d)) or any(la.get("status") == "failed" for la in d.get("launches") or [])


def test_a_trainer_scripts_rank0_traceback_with_no_vllm_line_is_not_the_engines() -> None:
    """BA4 (022: open-r1's GRPO trainer in TRL's server mode, '[rank0]: Traceback (most recent call last):' and three
    frames of open_r1/grpo.py, cut): the '[rankN]: ' prefix is PyTorch's distributed excepthook in any torchrun'd
    program; no frame is under vllm/ and no line is vLLM's, so it is a client of the server dying, not the engine.
    Not failing, no engine crash. (The only real excerpt of this shape found.)"""
    d = diagnose("eval32ba/022.log")
    assert not _failed(d), (d["findings"], d.get("launches"))
    assert "engine_crashed" not in by_id(d) and "engine_error" not in by_id(d), d["findings"]


@pytest.mark.parametrize(
    "log",
    [
        # V0 0.6.1.post2: 'Starting to load model …' then the header, cut
        "eval32p/026.log",
        # vllm-fork on Gaudi: 'Loading model weights took …' then the header, cut mid-word
        "eval32ax/024.log",
        # V0 ~0.6.2 under debugpy: vLLM's start-up records, then a [rank0] traceback through runpy / debugpy only
        "eval32z/009.log",
    ],
)
def test_a_rank0_traceback_in_a_log_whose_other_lines_are_vllms_still_fails(log: str) -> None:
    """BA4's other side: the same excepthook header after vLLM's own records (its logger prefix) is the engine's
    process exiting: still critical."""
    d = diagnose(log)
    assert critical(d), d["findings"]


@pytest.mark.parametrize(
    "log",
    [
        # BA1: the vLLM GPU codelab's deploy: gcloud's 'The user-provided container failed to start and listen on the
        # port defined provided by the PORT=8000 environment variable within the allocated timeout', then a second
        # deploy refused for its start-up probe's period
        "eval32ba/017.log",
        # BA1's second excerpt: the Gemma 4 vLLM codelab's deploy, the same sentence for PORT=8080
        # (googlecodelabs/feedback#1814)
        "excerpts/cloud-run-not-listening-gemma4-vllm-codelab-1814.log",
        # BA2: Model Garden's vLLM deploy through the aiplatform SDK: model.deploy → _deploy_call → the operation
        # future's result raising 'google.api_core.exceptions.FailedPrecondition: 400 Model server terminated: model
        # server container terminated'
        "eval32ba/018.log",
        # BA2's second excerpt: a Llama 3.1 vLLM deploy in Colab, IPython's traceback through polling.py's result ending
        # 'FailedPrecondition: 400 Model server exited unexpectedly.' (GoogleCloudPlatform/vertex-ai-samples#3443)
        "excerpts/vertex-model-server-exited-llama31-vllm-3443.log",
    ],
)
def test_a_cloud_hosts_word_that_the_serving_container_never_came_up_is_a_failed_launch(log: str) -> None:
    """BA1 / BA2: Cloud Run's revision whose container never listened on $PORT within its start-up probe's time, and
    Vertex AI's deploy whose model server container terminated before the deployment completed, are the launch failing
    (its cause in the container's own log): failing, never a crash while serving, nothing said of memory."""
    d = diagnose(log)
    assert critical(d), d["findings"]
    assert any(la.get("status") == "failed" for la in d.get("launches") or []), d.get("launches")
    assert "engine_crashed" not in by_id(d) and "cuda_oom" not in by_id(d), d["findings"]
    assert "--gpu-memory-utilization" not in str(d.get("recommendations")), d["recommendations"]


def test_only_the_hosts_own_words_are_read() -> None:
    """The narrow side of BA1 / BA2: gcloud's other deploy refusal (017's second error, a start-up probe's period out
    of range: the deploy's config, not the container) and a FailedPrecondition that is not the model server ending
    (any refused API call) are not read."""
    run = RunState(shutdown=False, stats_seen=False)
    probe = (DATA / "eval32ba" / "017.log").read_text().splitlines()[-1].strip()
    assert "startup_probe" in probe and hosted.death(probe, run, False) is None
    other = "google.api_core.exceptions.FailedPrecondition: 400 The request was refused"
    assert hosted.death(other, run, False) is None
    vertex = (DATA / "eval32ba" / "018.log").read_text().splitlines()[-1].strip()
    assert hosted.death(vertex, run, False) is not None
