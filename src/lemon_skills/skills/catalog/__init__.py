"""The skills visible from a directory: scanning the roots (discovery), the manifest cache,
the per-directory view (registry), enable/disable (enablement), readiness and doctor."""
