"""The vLLM log grammar: physical lines in, typed events out (every vLLM version, 0.1 → today).

The modules follow the data flow of one line:

* ``envelope`` — ANSI codes, collector wrappers, process and logger prefixes, Ray repeat counts,
  trailing locations, uvicorn access lines, and the year vLLM's stamps leave out;
* ``stats`` — the periodic stats line (V0 and V1 clauses) and its companions (V0 prefix-cache
  line, speculative decoding, preemption warnings);
* ``startup`` — startup facts, a table of trigger literal → pattern → reader (``rules``), with
  ``reprs`` (safe dict / Namespace / config repr readers) and ``flags`` (flag spellings);
* ``failures`` — the error grammar, a table of the same shape, and the dedup window;
* ``parser`` — the stateful :class:`Parser` composing them;
* ``triggers`` — every literal the message rules look for, in one list.
"""

from observe.parse.envelope import DEFAULT_YEAR
from observe.parse.parser import Parser, parse_text
from observe.parse.reprs import parse_dict_repr, parse_kv_repr

__all__ = ["DEFAULT_YEAR", "Parser", "parse_dict_repr", "parse_kv_repr", "parse_text"]
