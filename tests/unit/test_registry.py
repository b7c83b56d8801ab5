"""The one registry type: lazy entries, close-match suggestions, and the registries the
stages and the command line read."""

from __future__ import annotations

import sys

import pytest

from shiftbench.core.registry import Registry
from shiftbench.errors import InputError


def test_a_lazy_entry_imports_only_when_asked_for():
    registry = Registry("codec", {"json": "json:dumps", "fake": "shiftbench_no_such_module:x"})
    sys.modules.pop("shiftbench_no_such_module", None)
    assert registry.load("json")({"a": 1}) == '{"a": 1}'
    assert registry.entry("fake") == "shiftbench_no_such_module:x"  # not imported
    with pytest.raises(ModuleNotFoundError):
        registry.load("fake")


def test_an_unknown_name_lists_the_names_and_suggests_close_ones():
    registry = Registry("backend", {"embedded": 1, "ollama": 2, "openai": 3})
    with pytest.raises(InputError) as caught:
        registry.load("olama")
    assert str(caught.value) == (
        "unknown backend 'olama'; available: embedded, ollama, openai; did you mean ollama?"
    )
    with pytest.raises(InputError) as caught:
        registry.entry("zzz")
    assert str(caught.value) == "unknown backend 'zzz'; available: embedded, ollama, openai"


def test_a_taken_name_cannot_be_registered_again():
    registry = Registry("check", {"empty": len})
    registry.register("short", "builtins:len")
    assert registry.load("short") is len
    with pytest.raises(ValueError, match="check 'empty' is registered already"):
        registry.register("empty", "builtins:len")


def test_the_stages_registries_and_the_command_lines_choices_agree():
    from shiftbench import cli
    from shiftbench.core.text.checks import CHECKS
    from shiftbench.core.text.langid import IDENTIFIERS
    from shiftbench.core.text.transforms import REGISTERED
    from shiftbench.evaluate.evaluators import EVALUATORS, evaluator
    from shiftbench.human_eval.export import EXPORTERS
    from shiftbench.llm.backends import BACKENDS

    for registry in (CHECKS, EVALUATORS, EXPORTERS, IDENTIFIERS, BACKENDS, REGISTERED):
        assert isinstance(registry, Registry) and registry.names
    fmt = next(p for p in cli.human_eval_export.params if p.name == "formats")
    assert tuple(fmt.type.choices) == EXPORTERS.names
    assert callable(evaluator("STS"))
    with pytest.raises(InputError, match=r"unknown task type 'STSS'; .*did you mean STS"):
        evaluator("STSS")
