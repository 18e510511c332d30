"""Sampling requests from servers: the policy an entry configures (``policy``, pure) and the
SDK callback that applies it (``handler``)."""
