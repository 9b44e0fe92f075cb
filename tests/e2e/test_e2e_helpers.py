"""The browser tests' own helpers: their docstring examples run, and the pure parts behave
(no browser needed)."""

from __future__ import annotations

import doctest

import e2e_cdn
import e2e_explorer
import pytest
from e2e_explorer import TextColour, contrast_ratio
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize("module", [e2e_cdn, e2e_explorer], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


channel = st.floats(0, 255)
colour = st.lists(channel, min_size=3, max_size=3)


@given(colour, colour)
def test_contrast_is_symmetric_and_between_1_and_21(a, b):
    ratio = contrast_ratio(a, b)
    assert ratio == pytest.approx(contrast_ratio(b, a))
    assert 1.0 <= ratio <= 21.0 + 1e-9


def test_known_contrasts():
    # WCAG's own examples: #777 on white is just under 4.5:1, #767676 just over.
    assert contrast_ratio([0x77] * 3, [255] * 3) < 4.5 < contrast_ratio([0x76] * 3, [255] * 3)
    text = TextColour("x̄ 0.6", "wgx-adj", [0, 0, 0], [255, 255, 255])
    assert text.ratio == pytest.approx(21.0)
