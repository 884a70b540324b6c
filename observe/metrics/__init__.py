"""vLLM's metrics: the catalog of every name vLLM exposed (`names`, `catalog`, `histograms`,
`recent`), PromQL's shared meanings (`promql`), the arithmetic on samples (`metricmath`, `progress`,
`recentview`), and reading them (`scrape` /metrics, `promhistory` a Prometheus)."""
