"""observe — an observability stack and tuning advisor for vLLM servers."""

__version__ = "0.1.0"
