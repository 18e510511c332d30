"""How skills are used: the per-scope usage sidecar, the report built on it, and the bridge
that turns telemetry events into usage records."""
