"""Transports lemon runs itself instead of the SDK's (stdio: see ``stdio``)."""
