"""Which skills an agent gets: activation by the files in play, and per-agent profiles."""
