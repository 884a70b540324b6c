"""The live sidecar: it follows one vLLM's logs (or a node's pods' logs), scrapes its /metrics, and
serves its own /metrics, /healthz and /api/diagnosis — `service` composes it, `instance` is one vLLM
as it sees it, `launch` that vLLM's launch state, `config` its settings, `tail*` the log follower,
`exporter` what it serves, `kubeapi`/`podlogs`/`tokenfile` where it reads from."""
