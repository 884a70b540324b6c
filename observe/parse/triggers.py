"""Every literal the message rules look for, in one list, built from the rule tables.

A message (what is left of a line once ``envelope`` has peeled its wrappers and prefixes) in which
none of these occurs yields no stats sample, startup fact, error or shutdown: the parser's message
rules are tried only when one of their literals is present. The literals of the startup table, of
the failure table and of the shutdown markers are also kept apart (``GROUPS``): a message with none
of one group's literals needs that group's rules not tried at all. The envelope itself (prefixes,
process names, the year, a terminal-wrapped record's continuation, uvicorn access lines, JSON
records) is read from every line, whatever its message. One rule looks at the envelope, not the
message: an ERROR / CRITICAL record that no rule reads is the catch-all's ``error_line``
(``ERROR_LEVELS``), so such records are never skipped.
"""

from __future__ import annotations

from observe.parse import (
    failures,
    fastchat,
    frames,
    logerror,
    raypg,
    rules,
    served,
    shutdownmsg,
    startup,
    stats,
)

#: the literals, each once: stats routing first, then the startup and failure tables, then shutdown
TRIGGERS: tuple[str, ...] = tuple(
    dict.fromkeys(
        stats.TRIGGERS
        + rules.literals(startup.RULES, failures.RULES)
        + shutdownmsg.SHUTDOWN_LITERALS
        + served.SERVING_LITERALS
        + frames.LITERALS
        + logerror.LITERALS
        + fastchat.LITERALS
        + raypg.LITERALS
    )
)


#: the logger levels whose records are read by the catch-all whatever their message
ERROR_LEVELS = ("ERROR", "CRITICAL")

#: the groups of literals whose rules ``Parser`` can skip as a whole: a bit each
STARTUP, FAILURE, SHUTDOWN, SERVING = 1, 2, 4, 8
ALL = STARTUP | FAILURE | SHUTDOWN | SERVING
GROUPS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (STARTUP, rules.literals(startup.RULES)),
    (FAILURE, rules.literals(failures.RULES) + raypg.LITERALS),
    (SHUTDOWN, shutdownmsg.SHUTDOWN_LITERALS),
    (SERVING, served.SERVING_LITERALS),
)


def may_matter(msg: str) -> bool:
    """Whether any message rule could read something off msg."""
    return any(t in msg for t in TRIGGERS)
