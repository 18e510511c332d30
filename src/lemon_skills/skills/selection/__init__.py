"""Which skills an agent gets: activation by the files in play, per-agent profiles, the
skills relevant to a request (relevance, measured by evaluation) and the prompt block (offer)."""
