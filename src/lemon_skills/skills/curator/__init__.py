"""The curator: lifecycle transitions for agent-authored skills (plan, run, state, rollback,
report), the review prompt it gives the agent, and the background scheduler.

``plan`` is the pure planner, ``run`` its I/O shell, ``control`` the status and pause switches
the CLI uses, ``scheduler`` the ``CuratorManager`` a host runs in the background.
"""
