"""Ranges and choices are written once, on the settings fields; the settings, the CLI and
the spec reader all refuse the same values with the same words."""

from __future__ import annotations

import dataclasses

import click
import pytest

import shiftbench
from shiftbench.core.settings import BOUND, Bound, bound
from shiftbench.errors import InputError
from shiftbench.human_eval.api import ExportSettings

SETTINGS = (
    shiftbench.GenSettings,
    shiftbench.ValidateSettings,
    shiftbench.CalibrateSettings,
    shiftbench.BatchSettings,
    ExportSettings,
    shiftbench.EvalSettings,
    shiftbench.ProbeRunSettings,
)


def bounded_fields():
    for owner in SETTINGS:
        for f in dataclasses.fields(owner):
            if BOUND in f.metadata:
                yield owner, f.name


def probes(limit: Bound) -> list[object]:
    """Values on, inside and outside every edge of a bound, and a few of the wrong kind."""
    if limit.choices:
        return [*limit.choices, "nonsense", limit.choices[0].upper()]
    values: list[object] = []
    step = 1 if limit.kind is int else 0.5
    for edge in (limit.low, limit.high):
        if edge is not None:
            values += [edge - step, edge, edge + step]
    if limit.kind is float:
        values += [0.25, -0.25]
    return values


def test_there_are_bounds_to_check():
    found = list(bounded_fields())
    assert len(found) >= 25
    assert (shiftbench.GenSettings, "top_p") in found


@pytest.mark.parametrize(("owner", "name"), list(bounded_fields()))
def test_a_bound_refuses_what_the_options_click_type_refuses(owner, name):
    """The settings' own check agrees with click's converter of the option built from the
    bound, value for value and word for word."""
    from shiftbench.cli.commands.options import option_type

    limit = bound(owner, name)
    assert limit is not None
    kind = option_type(owner, name)
    for value in probes(limit):
        try:
            kind.convert(value, None, None)
            clicks = None
        except click.BadParameter as exc:
            clicks = exc.message
        assert limit.problem(value) == clicks, (owner.__name__, name, value)


def test_library_settings_refuse_values_out_of_range():
    with pytest.raises(InputError) as caught:
        shiftbench.GenSettings(top_p=1.5)
    assert str(caught.value) == "GenSettings.top_p: 1.5 is not in the range 0<x<=1."
    with pytest.raises(InputError) as caught:
        shiftbench.ValidateSettings(judge_modes=("similarity", "vibes"))
    assert str(caught.value) == (
        "ValidateSettings.judge_modes: 'vibes' is not one of 'similarity', 'quality'."
    )
    with pytest.raises(InputError) as caught:
        shiftbench.BatchSettings(raters=0)
    assert str(caught.value) == "BatchSettings.raters: 0 is not in the range x>=1."
    with pytest.raises(InputError) as caught:
        shiftbench.EvalSettings(batch_size=2.5)
    assert str(caught.value) == "EvalSettings.batch_size: 2.5 is not an integer."


def test_none_means_not_set_and_the_defaults_are_in_bounds():
    for owner in SETTINGS:
        owner()  # every default passes its own bound
    assert shiftbench.GenSettings(temperature=None, top_p=None).top_p is None
