#!/bin/sh
# Fill the ${NAME:-default} placeholders of the Alertmanager config from the environment, then
# exec Alertmanager on the rendered copy. Values are inserted as text inside double-quoted YAML
# strings (backslashes and quotes escaped), never evaluated by a shell.
#   AM_CONFIG_TEMPLATE  the template (default /etc/alertmanager/alertmanager.yml)
#   AM_CONFIG_OUT       the rendered file (default /tmp/alertmanager.yml)
#   ALERTMANAGER_BIN    the binary to exec (default /bin/alertmanager)
#   AM_DISPATCH_START_DELAY  --dispatch.start-delay (default 1m, Prometheus's --rules.alert.resend-delay):
#                       after a (re)start Alertmanager sends nothing until every Prometheus has re-sent
#                       its firing alerts, so the inhibitor knows the sources before a group flushes.
#                       Without it a group whose alerts fired long ago flushes at once and pages what its
#                       source silenced (prometheus/alertmanager#4064). Passed when the binary knows the
#                       flag (>= 0.30) and the arguments do not name it; "" leaves it out.
set -eu
src="${AM_CONFIG_TEMPLATE:-/etc/alertmanager/alertmanager.yml}"
out="${AM_CONFIG_OUT:-/tmp/alertmanager.yml}"
bin="${ALERTMANAGER_BIN:-/bin/alertmanager}"
awk '
{
  line = $0; res = ""
  while (match(line, /\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}/)) {
    tok = substr(line, RSTART + 2, RLENGTH - 3)
    name = tok; def = ""
    i = index(tok, ":-")
    if (i > 0) { name = substr(tok, 1, i - 1); def = substr(tok, i + 2) }
    val = ((name in ENVIRON) && ENVIRON[name] != "") ? ENVIRON[name] : def
    gsub(/\\/, "&&", val)
    gsub(/"/, "\\\"", val)
    res = res substr(line, 1, RSTART - 1) val
    line = substr(line, RSTART + RLENGTH)
  }
  print res line
}' "$src" > "$out"
delay="${AM_DISPATCH_START_DELAY-1m}"
case " $* " in *" --dispatch.start-delay"*) delay="" ;; esac
if [ -n "$delay" ]; then
  case "$("$bin" --help 2>&1)" in
    *--dispatch.start-delay*) set -- --dispatch.start-delay="$delay" "$@" ;;
  esac
fi
exec "$bin" --config.file="$out" "$@"
