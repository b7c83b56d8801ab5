"""Text and languages: the transforms and their prompts, the automatic checks, language
identification, language names and scripts."""
