"""Pinned outputs: any change to a model shows up here and must be explained (and the
pins regenerated with ``python -m tests.regression.cases``)."""

import json

import pytest

from tests.regression.cases import CASES, PINNED, compute


@pytest.fixture(scope="module")
def current():
    return compute()


@pytest.mark.parametrize("name", sorted(CASES))
def test_pinned(name, current):
    pinned = json.loads(PINNED.read_text())[name]
    assert len(current[name]) == len(pinned)
    for now, then in zip(current[name], pinned):
        for column, value in then.items():
            if isinstance(value, float):
                assert now[column] == pytest.approx(value, rel=1e-9), (name, column, then)
            else:
                assert now[column] == value, (name, column, then)
