"""The book's explorers: the kernel-free frame explorer embeds one distinct frame per setting."""

import pytest

from lengthgen.config import ConfigError
from lengthgen.widgets import frame_explorer


def _draw(c=1.0, kind="a"):
    from lengthgen import plotting

    fig, ax = plotting.figure(width=2, height=1.5)
    ax.plot([0, 1], [0, c if kind == "a" else -c])
    ax.set(xlabel="x", ylabel="y")
    return fig


def test_frames_per_combination_and_controls():
    ex = frame_explorer(
        _draw,
        {"c": [1.0, 2.0, 3.0], "kind": ["a", "b"]},
        labels={"c": "margin c"},
        initial={"c": 2.0},
    )
    assert (
        len(ex.frames) == 6 and len(set(ex.frames.values())) == 6
    )  # every frame differs
    html = ex._repr_html_()
    assert 'type="range"' in html and "<select" in html and "margin c" in html
    assert "data:image/png;base64," in html and "<script>" in html
    assert 'value="1" data-i="0"' in html  # initial c = 2.0 is index 1


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"grid": {}}, "non-empty dict"),
        ({"grid": {"c": []}}, "non-empty list"),
        ({"grid": {"c": list(range(201))}}, "at most 200 frames"),
        ({"grid": {"c": [1.0]}, "initial": {"c": 5.0}}, "not on the grid"),
    ],
)
def test_bad_input(kw, match):
    with pytest.raises(ConfigError, match=match):
        frame_explorer(_draw, **kw)
