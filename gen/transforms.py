"""The transformations gen applies, each with its robustness axis and its own prompt."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from shiftbench.errors import InputError
from shiftbench.sources import suggest


@dataclass(frozen=True)
class Transform:
    """One LLM transformation: its axis, its prompt file and its output budget."""

    name: str
    axis: str
    prompt_file: str
    description: str
    calls: int = 1
    max_new_tokens: int = 512

    def token_budget(self, text: str, cap: int) -> int:
        """Tokens an output of `text` may use: room for a rewrite of similar length.

        Words times four or characters over two (whichever is larger, so scripts without
        spaces get enough), plus 48, and never more than `cap`.
        """
        return min(cap, 48 + max(4 * len(text.split()), len(text) // 2))


@dataclass(frozen=True)
class Prompt:
    """A prompt template with `{text}` where the input goes, and where it came from."""

    text: str
    origin: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, text: str) -> str:
        return self.text.replace("{text}", text)


TRANSFORMS: dict[str, Transform] = {
    "paraphrase": Transform(
        name="paraphrase",
        axis="Lexical/Stylistic",
        prompt_file="paraphrase.txt",
        description="rephrase in the same language, same meaning",
    ),
}


def get_transform(name: str) -> Transform:
    try:
        return TRANSFORMS[name]
    except KeyError:
        raise InputError(
            f"unknown transform {name!r}; available: {', '.join(TRANSFORMS)}"
            f"{suggest(name, list(TRANSFORMS))}"
        ) from None


def load_prompt(transform: Transform, override: str | None = None) -> Prompt:
    """The transform's packaged prompt, or a user's template file (must contain {text})."""
    if override is None:
        text = resources.files("shiftbench.gen").joinpath("prompts", transform.prompt_file)
        return Prompt(text.read_text(encoding="utf-8"), f"shiftbench:{transform.prompt_file}")
    path = Path(override)
    if not path.is_file():
        raise InputError(f"prompt file {override} does not exist")
    body = path.read_text(encoding="utf-8")
    if "{text}" not in body:
        raise InputError(f"prompt file {override} has no {{text}} placeholder")
    return Prompt(body, str(path.resolve()))
