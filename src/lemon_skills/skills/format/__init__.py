"""The SKILL.md format: frontmatter (cutting the file, reading YAML or TOML), manifest (the
normalised fields), the compact cached form, Entry and Diagnostic (model), names, bundles, lint,
and confining a skill's files to its directory."""
