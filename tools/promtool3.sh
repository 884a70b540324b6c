#!/usr/bin/env bash
# Put a Prometheus 3 promtool beside Debian's (bookworm ships 2.42), for `promtool test rules` on the
# major kube-prometheus-stack and compose run, and an Alertmanager >= 0.30 beside Debian's 0.25 (the
# --dispatch.start-delay that compose passes, tests/test_alert_restart.py). No download outside the
# package registry: Debian's own `promtool` and `prometheus-alertmanager` packages (unstable carries
# Prometheus 3 and Alertmanager 0.33; Go binaries needing only libc >= 2.34), fetched with
# `apt-get download` through a private sources list and state folder, so the machine's apt
# configuration is left as it is, then unpacked (not installed) into the cache. Idempotent.
#
#   OBSERVE_PROMTOOL3          where promtool goes (default ~/.cache/observe/promtool3/promtool)
#   OBSERVE_ALERTMANAGER_NEW   where Alertmanager goes (default ~/.cache/observe/alertmanager-new/alertmanager);
#                              tests/services.py looks in both places too
#   OBSERVE_DEBIAN_SUITE       the Debian suite to take them from (default unstable)
# Exit 1 when no Prometheus 3 promtool could be put; a missing Alertmanager is a warning (its test
# fails in CI on its own).
set -euo pipefail

DEST="${OBSERVE_PROMTOOL3:-$HOME/.cache/observe/promtool3/promtool}"
AM_DEST="${OBSERVE_ALERTMANAGER_NEW:-$HOME/.cache/observe/alertmanager-new/alertmanager}"
SUITE="${OBSERVE_DEBIAN_SUITE:-unstable}"
log() { echo "promtool3.sh: $*"; }

major() { "$1" --version 2>/dev/null | sed -n 's/^promtool, version \([0-9]*\)\..*/\1/p'; }
has_start_delay() { [[ "$("$1" --help 2>&1)" == *--dispatch.start-delay* ]]; }

have_pt=0 have_am=0
[[ -x "$DEST" && "$(major "$DEST")" == 3 ]] && have_pt=1
[[ -x "$AM_DEST" ]] && has_start_delay "$AM_DEST" && have_am=1
if ((have_pt && have_am)); then
  log "$("$DEST" --version | head -1) already in $DEST; $("$AM_DEST" --version 2>&1 | head -1) in $AM_DEST"
  exit 0
fi
command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 \
  || { log "apt-get / dpkg-deb not found (not Debian): no Prometheus 3 promtool"; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/deb"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
signed=""
[[ -f "$keyring" ]] && signed="[signed-by=$keyring] "
echo "deb ${signed}http://deb.debian.org/debian $SUITE main" >"$work/sources.list"
apt=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "Debug::NoLocking=1"
  -o APT::Sandbox::User=root)
[[ $(id -u) -eq 0 ]] || apt=("${apt[@]:0:${#apt[@]}-2}")
log "fetching Debian $SUITE's package list"
apt-get -qq "${apt[@]}" update

# unpack PACKAGE's /usr/bin/BIN into the work folder; print its path
unpack() {
  (cd "$work/deb" && apt-get -qq "${apt[@]}" download "$1") || return 1
  local deb=("$work"/deb/"$1"_*.deb)
  dpkg-deb -x "${deb[0]}" "$work/root-$1" && echo "$work/root-$1/usr/bin/$2"
}

rc=0
if ((!have_pt)); then
  bin="$(unpack promtool promtool)" || bin=""
  m="$( [[ -n "$bin" ]] && major "$bin" || true)"
  if [[ "$m" == 3 ]]; then
    mkdir -p "$(dirname "$DEST")"
    install -m 0755 "$bin" "$DEST"
    log "$("$DEST" --version | head -1) in $DEST"
  else
    log "Debian $SUITE's promtool is major ${m:-unknown}, not 3: not used"
    rc=1
  fi
fi
if ((!have_am)); then
  bin="$(unpack prometheus-alertmanager prometheus-alertmanager)" || bin=""
  if [[ -n "$bin" ]] && has_start_delay "$bin"; then
    mkdir -p "$(dirname "$AM_DEST")"
    install -m 0755 "$bin" "$AM_DEST"
    log "$("$AM_DEST" --version 2>&1 | head -1) in $AM_DEST"
  else
    log "WARNING: Debian $SUITE's Alertmanager has no --dispatch.start-delay: not used"
  fi
fi
exit "$rc"
