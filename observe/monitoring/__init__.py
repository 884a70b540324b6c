"""The monitoring artefacts generated from one Settings object: the alerting rules (`alerts`,
`alertopts`), the recording rules, the Grafana dashboards (`dashboards`, `dashjson`) and the
Kubernetes manifests (`kubernetes`)."""
