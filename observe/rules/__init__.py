"""The findings as rules: each finding declared once, in the module of its family.

- ``ids`` — every finding id (``FindingId``), the only place an id is written;
- ``base`` — the record: ``Rule`` (detection, the Settings fields it reads, what it needs, its
  levers, its own ``State``), ``Doc`` (a finding's severity, evidence, advice, versions, the note
  said when no flag helps, the alert that pages on it), ``Lever`` (rank, act, the findings it
  answers) and ``State`` (a rule's accumulator over a launch's events); ``summary`` — what the
  rules share (``Summary``); ``context`` — what a rule reads (``Context``, typed) and ``facts`` —
  what a lever reads (``Facts``);
- one module per family: ``failures`` (the engine did not start, failed or died, requests
  rejected), ``kv`` (KV cache and memory), ``swap`` (V0 swap space), ``batch`` (batch size and
  queues), ``length`` (context length), ``latency`` (latency and SLOs), ``stall`` (stalls and
  hangs), ``spec`` (speculative decoding), ``hints`` (vLLM's own hints), ``kvcheck`` (V0's KV size
  check cut off);
- ``table`` — ``RULES``, the one ordered table: detection runs in its order, the levers in their
  rank, the notes close the plan; ``doc`` renders docs/findings.md from it.

This package's ``__init__`` imports nothing: ``observe.advise`` reads ``facts`` and ``ids`` without
loading the families (which import the advisor's levers).
"""
