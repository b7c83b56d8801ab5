"""A run folder as mteb tasks: mteb.evaluate on them gives evaluate's main scores."""

from __future__ import annotations

import pytest

import shiftbench


def test_mteb_tasks_refuses_what_it_cannot_make(tmp_path):
    from shiftbench.errors import InputError

    with pytest.raises(InputError, match="is neither a run folder nor a release"):
        shiftbench.mteb_tasks(tmp_path)
