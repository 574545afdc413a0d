"""The book's explorers: the kernel-free frame explorer embeds one distinct frame per setting."""

import pytest

from lengthgen.config import ConfigError
from lengthgen.widgets import frame_explorer


def _draw(c=1.0, kind="a", n=1):
    from lengthgen import plotting

    fig, ax = plotting.figure(width=2, height=1.5)
    ax.plot([0, 1], [0, (c if kind == "a" else -c) * n])
    ax.set(xlabel="x", ylabel="y")
    return fig


def test_frames_per_combination_and_controls():
    ex = frame_explorer(
        _draw,
        {"c": [1.0, 2.0, 3.0], "kind": ["a", "b"]},
        labels={"c": "margin c"},
        initial={"c": 2.0},
    )
    assert len(ex.frames) == 6 and len(set(ex.frames.values())) == 6  # every frame differs
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


def test_frames_are_hidpi_and_shown_at_their_drawn_size():
    import base64
    import io

    from PIL import Image

    from lengthgen import widgets

    ex = frame_explorer(_draw, {"c": [1.0, 2.0]})
    png = base64.b64decode(next(iter(ex.frames.values())))
    w = Image.open(io.BytesIO(png)).size[0]
    assert w == 2 * widgets.DISPLAY_PX_PER_INCH * 2  # a 2-inch figure, twice its display size
    assert f"width:{w // widgets.HIDPI}px;max-width:100%" in ex.html


def test_a_control_that_changes_nothing_is_refused():
    def same(c=1.0, kind="a"):
        return _draw(c=1.0, kind=kind)  # c is ignored

    with pytest.raises(ConfigError, match="same figure"):
        frame_explorer(same, {"c": [1.0, 2.0], "kind": ["a", "b"]})


def test_frames_are_compared_as_the_reader_sees_them():
    """Data 1e-9 apart draw frames a reader cannot tell apart, whatever anti-aliasing does
    with them (issue 35: byte-identical on matplotlib 3.10, nine pixels apart on 3.11): the
    explorer refuses them. A curve moved by a tenth of its range is a visible change."""

    def nudged(c=1.0):
        return _draw(c=1.0 + (c - 1.0) * 1e-9)

    with pytest.raises(ConfigError, match="same figure at {'c': 1.0} and {'c': 2.0}"):
        frame_explorer(nudged, {"c": [1.0, 2.0]})
    frame_explorer(_draw, {"c": [1.0, 1.1]})


def test_look_alike_counts_pixels_over_the_level():
    import numpy as np

    from lengthgen import widgets

    a = np.zeros((50, 50, 3), dtype=np.uint8)
    b = a.copy()
    b[0, : widgets.VISIBLE_PIXELS - 1] = 255  # one pixel short of visible
    b[1:, :] = widgets.VISIBLE_LEVEL  # a shift no reader sees, however many pixels
    assert widgets._look_alike(a, b)
    b[0, widgets.VISIBLE_PIXELS - 1] = 255
    assert not widgets._look_alike(a, b)
    assert not widgets._look_alike(a, a[:-1])


def test_the_live_explorer_redraws_off_the_grid():
    """In a kernel the explorer is an ipywidgets widget: its first image is the static initial
    frame; a slider spans the grid's range and an off-grid value redraws the figure with the same
    function; a discrete setting is a drop-down of its grid values."""
    import base64

    pytest.importorskip("ipywidgets")
    ex = frame_explorer(
        _draw,
        {"c": [1.0, 2.0, 3.0], "kind": ["a", "b"], "n": [1, 10, 1000]},
        initial={"c": 2.0},
        discrete=("n",),
    )
    w = ex.widget()
    first = w.image.value
    assert first == base64.b64decode(ex.frames[(2.0, "a", 1)])
    c = w.controls["c"]
    assert (c.min, c.max) == (1.0, 3.0) and type(c).__name__ == "FloatSlider"
    assert type(w.controls["n"]).__name__ == "Dropdown"
    assert type(w.controls["kind"]).__name__ == "Dropdown"
    c.value = 2.37  # not on the grid
    assert w.settings()["c"] == pytest.approx(2.37, abs=0.01)
    assert w.image.value != first
    assert w.image.value not in {base64.b64decode(f) for f in ex.frames.values()}
    assert w.image.value == ex.draw_png(**w.settings())


def test_the_output_offers_the_widget_and_the_static_frames(monkeypatch):
    """The display bundle always carries the static HTML; in a kernel it also carries the
    widget view, which a live front end prefers and the static book never renders."""
    pytest.importorskip("ipywidgets")
    ex = frame_explorer(_draw, {"c": [1.0, 2.0]})
    assert set(ex._repr_mimebundle_()) == {"text/html", "text/plain"}  # no kernel here

    class Shell:
        kernel = object()

    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell())
    bundle = ex._repr_mimebundle_()
    # the view of the explorer's own widget, on ipywidgets 7 (no _repr_mimebundle_) and 8 alike
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view == {
        "version_major": 2,
        "version_minor": 0,
        "model_id": ex.widget().model_id,
    }
    assert bundle["text/html"] == ex.html and bundle["text/plain"] == "<explorer>"


def test_display_in_a_kernel_prints_no_traceback(capsys):
    """IPython's formatter runs the bundle as a notebook does: a formatter that raised would
    print a traceback and leave the widget out (issue 35: ipywidgets 7 has no
    _repr_mimebundle_)."""
    pytest.importorskip("ipywidgets")
    from IPython.core.formatters import DisplayFormatter
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.kernel = object()  # what ipykernel sets; the widget comm needs no kernel to be built
    try:
        ex = frame_explorer(_draw, {"c": [1.0, 2.0]})
        data, _ = DisplayFormatter(parent=shell).format(ex)
    finally:
        del shell.kernel
    assert "application/vnd.jupyter.widget-view+json" in data
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err


def test_the_static_book_does_not_render_widget_views():
    from pathlib import Path

    import yaml

    cfg = yaml.safe_load((Path(__file__).resolve().parents[1] / "_config.yml").read_text())
    over = cfg["sphinx"]["config"]["nb_mime_priority_overrides"]
    assert ["html", "application/vnd.jupyter.widget-view+json", None] in over
