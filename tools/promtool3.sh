#!/usr/bin/env bash
# Put a Prometheus 3 promtool beside Debian's (bookworm ships 2.42), for `promtool test rules` on the
# major kube-prometheus-stack and compose run. No download outside the package registry: Debian's own
# `promtool` package (unstable carries Prometheus 3; a Go binary needing only libc >= 2.34), fetched
# with `apt-get download` through a private sources list and state folder, so the machine's apt
# configuration is left as it is, then unpacked (not installed) into the cache. Idempotent.
#
#   OBSERVE_PROMTOOL3   where the binary goes (default ~/.cache/observe/promtool3/promtool);
#                       tests/services.py looks there too
#   OBSERVE_DEBIAN_SUITE the Debian suite to take it from (default unstable)
set -euo pipefail

DEST="${OBSERVE_PROMTOOL3:-$HOME/.cache/observe/promtool3/promtool}"
SUITE="${OBSERVE_DEBIAN_SUITE:-unstable}"
log() { echo "promtool3.sh: $*"; }

major() { "$1" --version 2>/dev/null | sed -n 's/^promtool, version \([0-9]*\)\..*/\1/p'; }

if [[ -x "$DEST" && "$(major "$DEST")" == 3 ]]; then
  log "$("$DEST" --version | head -1) already in $DEST"
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
(cd "$work/deb" && apt-get -qq "${apt[@]}" download promtool)
deb=("$work"/deb/promtool_*.deb)
dpkg-deb -x "${deb[0]}" "$work/root"
bin="$work/root/usr/bin/promtool"
m="$(major "$bin")"
[[ "$m" == 3 ]] || { log "Debian $SUITE's promtool is major ${m:-unknown}, not 3: not used"; exit 1; }
mkdir -p "$(dirname "$DEST")"
install -m 0755 "$bin" "$DEST"
log "$("$DEST" --version | head -1) in $DEST (from $(basename "${deb[0]}"))"
