"""The SKILL.md format: parsing frontmatter (manifest), the compact cached form, Entry and
Diagnostic (model), names, bundles, lint, and confining a skill's files to its directory."""
