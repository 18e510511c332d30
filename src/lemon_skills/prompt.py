"""The system-prompt block for a request, under the name the product contract gives it.

    from lemon_skills import prompt

    block = prompt.render("deploy this service to kubernetes", cwd=project)
    system_prompt = base_prompt + "\n\n" + block.text
    for note in block.diagnostics:  # what the budget cut, if anything
        log.info(note)

``render`` is ``lemon_skills.render_prompt``: the relevant skills that clear the relevance
bar, with their content (``mode="content"``) or metadata only, then a catalogue of the other
usable skills, within ``budget`` characters. Unlike ``find_relevant``, which ranks every
enabled skill, it leaves out skills that cannot be offered here: wrong platform, blocked by
the audit, or ``disable-model-invocation``. With ``tools=True`` it also chooses the tools to
send for the request within the same budget (``lemon_skills.tools.prompt``).
"""

from __future__ import annotations

from lemon_skills.skills.prompt import DEFAULT_BUDGET, Mode, RenderedPrompt
from lemon_skills.tools.prompt import render

__all__ = ["DEFAULT_BUDGET", "Mode", "RenderedPrompt", "render"]
