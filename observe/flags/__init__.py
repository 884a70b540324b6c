"""vLLM's command line, in one folder: the vocabulary (`cmdline`: every spelling of a flag, the
model a launch runs), which release has which flag and its default (`vllmflags`, from
`observe/data/vllm_flags.json`), what the advisor asks of them (`known`), and, as edges, the flags
of an installed vLLM as its own parser defines them (`installed`, `probe`). Empty on purpose: the
modules sit in different layers of the import contract."""
