"""The chapters' explorers: :func:`frame_explorer` serves the static book (frames drawn at build
time, swapped by a few lines of JavaScript) and a running kernel (an ipywidgets explorer over each
setting's whole range); ``_repr_mimebundle_`` carries both."""

from __future__ import annotations

import base64
import io
import itertools
import json
import math
import uuid

from lengthgen.config import ConfigError, nonempty

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: CSS pixels per inch of figure in an explorer, and how many drawn pixels per CSS pixel
DISPLAY_PX_PER_INCH, HIDPI = 100, 2
#: Two frames look the same when fewer than VISIBLE_PIXELS pixels differ by more than VISIBLE_LEVEL
#: of 255 in a channel (anti-aliasing moves a few pixels; a moved curve hundreds; issue 35).
VISIBLE_LEVEL, VISIBLE_PIXELS = 48, 40


def _png(fig, dpi: int):
    """The figure (closed) as a quantized base64 PNG, its width in pixels and its RGB pixels."""
    import matplotlib.pyplot as plt
    import numpy as np
    from PIL import Image  # a dependency of matplotlib

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    im = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    out = io.BytesIO()
    im.quantize(colors=192).save(out, format="PNG", optimize=True)
    return base64.b64encode(out.getvalue()).decode("ascii"), im.size[0], np.asarray(im)


def _look_alike(a, b) -> bool:
    """Whether two frames' pixels look the same (within VISIBLE_LEVEL and VISIBLE_PIXELS)."""
    if a.shape != b.shape:
        return False
    changed = (abs(a.astype(int) - b).max(axis=-1) > VISIBLE_LEVEL).sum()
    return int(changed) < VISIBLE_PIXELS


class FrameExplorer:
    """A :func:`frame_explorer`: ``html`` (static), ``frames`` (combination → PNG), a widget."""

    def __init__(self, html, frames, grid, *, draw, dpi, labels, start, discrete):
        self.html, self.frames, self.grid = html, frames, grid
        self._draw, self._dpi, self._labels = draw, dpi, labels
        self._start, self._discrete, self._widget = start, discrete, None

    def _repr_html_(self) -> str:
        return self.html

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/html": self.html, "text/plain": "<explorer>"}
        try:
            from IPython import get_ipython

            if getattr(get_ipython(), "kernel", None) is None:  # no kernel: the static one
                return bundle
            w = self.widget()
        except ImportError:  # no IPython or no ipywidgets: the static explorer serves
            return bundle
        # the display data that shows a widget, as ipywidgets 7 and 8 both send it
        bundle[WIDGET_VIEW] = {"version_major": 2, "version_minor": 0, "model_id": w.model_id}
        return bundle

    def draw_png(self, **settings) -> bytes:
        """The figure at any ``settings`` (on the grid or not), as PNG bytes."""
        return base64.b64decode(_png(self._draw(**settings), self._dpi)[0])

    def widget(self):
        """The live explorer (ipywidgets): a slider over each numeric setting's range (log-spaced
        beyond two decades), a drop-down per text or ``discrete`` setting, and the figure."""
        if self._widget is not None:
            return self._widget
        import ipywidgets as W

        controls, combo = {}, []
        for i, k in enumerate(self.grid):
            vals = list(self.grid[k])
            combo.append(v0 := vals[self._start[i]])
            numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals)
            if not numeric or k in self._discrete or len(vals) < 2:
                controls[k] = W.Dropdown(
                    options=[(str(v), v) for v in vals], value=v0, description=self._labels[k]
                )
                continue
            lo, hi = min(vals), max(vals)
            ints = all(isinstance(v, int) for v in vals)
            common = dict(value=v0, description=self._labels[k], continuous_update=False)
            if lo > 0 and hi / lo > 100:
                a, b = math.log10(lo), math.log10(hi)
                controls[k] = W.FloatLogSlider(base=10, min=a, max=b, step=(b - a) / 200, **common)
            elif ints:
                controls[k] = W.IntSlider(min=lo, max=hi, step=1, **common)
            else:
                controls[k] = W.FloatSlider(min=lo, max=hi, step=(hi - lo) / 200, **common)
                controls[k].readout_format = ".3g"
            controls[k]._lg_int = ints
        image = W.Image(value=base64.b64decode(self.frames[tuple(combo)]), format="png")
        image.layout.max_width = "100%"

        def settings():
            return {
                k: int(round(c.value)) if getattr(c, "_lg_int", False) else c.value
                for k, c in controls.items()
            }

        def redraw(_=None):
            image.value = self.draw_png(**settings())

        for c in controls.values():
            c.observe(redraw, names="value")
        box = W.VBox([W.HBox(list(controls.values())), image])
        box.controls, box.image, box.settings = controls, image, settings
        self._widget = box
        return box


def _check_grid(draw, grid, initial: dict, discrete) -> tuple[list, list]:
    """Check :func:`frame_explorer`'s arguments; returns the names and every combination."""
    if not isinstance(grid, dict) or not grid:
        raise ConfigError("grid must be a non-empty dict {argument: [values, ...]}")
    names = list(grid)
    combos = list(itertools.product(*(nonempty(f"grid[{k!r}]", grid[k]) for k in names)))
    if len(combos) > 200:
        raise ConfigError(f"the grid holds {len(combos)} frames; at most 200 frames are embedded")
    if not callable(draw):
        raise ConfigError(f"draw must be a function returning a matplotlib figure, got {draw!r}")
    for k, v in initial.items():
        if k not in grid or v not in list(grid[k]):
            raise ConfigError(f"initial {k}={v!r} is not on the grid: {list(grid.get(k, []))}")
    if stray := [k for k in discrete if k not in grid]:
        raise ConfigError(f"discrete names {stray[0]!r}, not an argument of the grid: {names}")
    return names, combos


def _draw_frames(draw, names: list, combos: list, dpi: float) -> tuple[dict, int]:
    """Every frame ``{combination: png}``, the widest in pixels; refuses look-alike neighbours."""
    frames, width_px, pixels = {}, 0, {}
    for combo in combos:
        frames[combo], w, pixels[combo] = _png(draw(**dict(zip(names, combo))), dpi)
        width_px = max(width_px, w)
        for other in pixels:  # a neighbour: one setting apart
            near = sum(x != y for x, y in zip(combo, other)) == 1
            if near and _look_alike(pixels[combo], pixels[other]):
                a, b = dict(zip(names, other)), dict(zip(names, combo))
                raise ConfigError(
                    f"the explorer draws the same figure at {a} and {b}: a control that "
                    "changes nothing visible there must not offer both"
                )
    return frames, width_px


def _control(label: str, vals: list, start: int, i: int) -> str:
    """The HTML control of argument ``i``: a slider over numeric values, else a drop-down."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return (
            f'<label style="margin-right:1.2em">{label} '
            f'<input type="range" min="0" max="{len(vals) - 1}" step="1" value="{start}" data-i="{i}" '
            f'style="vertical-align:middle"> <output>{vals[start]}</output></label>'
        )
    opts = "".join(
        f'<option value="{j}"{" selected" if j == start else ""}>{v}</option>'
        for j, v in enumerate(vals)
    )
    return f'<label style="margin-right:1.2em">{label} <select data-i="{i}">{opts}</select></label>'


def frame_explorer(draw, grid: dict, *, labels=None, initial=None, discrete=()) -> FrameExplorer:
    """A kernel-free explorer: ``draw(**settings)`` for every combination of ``grid`` (``{argument:
    [values, …]}``, at most 200) embedded as PNG frames, one control per argument (``labels`` names
    them, ``initial`` picks the first frame, ``discrete``: numeric arguments the live explorer
    offers as a drop-down). Every option must change the figure visibly."""
    initial = initial or {}
    names, combos = _check_grid(draw, grid, initial, discrete)
    labels = {**{k: k for k in names}, **(labels or {})}
    dpi = DISPLAY_PX_PER_INCH * HIDPI
    frames, width_px = _draw_frames(draw, names, combos, dpi)
    width = f"{width_px // HIDPI}px"
    uid = "fx" + uuid.uuid4().hex[:10]
    start = [list(grid[k]).index(initial[k]) if k in initial else 0 for k in names]
    controls = [_control(labels[k], list(grid[k]), start[i], i) for i, k in enumerate(names)]
    shape = [len(grid[k]) for k in names]
    data = json.dumps([frames[c] for c in combos])
    values = json.dumps([[str(v) for v in grid[k]] for k in names])
    html = f"""<div id="{uid}" class="lg-explorer" style="border:1px solid #ddd;padding:6px;border-radius:4px">
<div class="lg-controls" style="font-size:0.9em;margin-bottom:4px">{"".join(controls)}</div>
<img class="lg-frame" style="width:{width};max-width:100%" alt="explorer frame">
<script>(function(){{
var root=document.getElementById("{uid}"), frames={data}, shape={json.dumps(shape)}, values={values};
var idx={json.dumps(start)};
function show(){{var f=0;for(var i=0;i<shape.length;i++){{f=f*shape[i]+idx[i];}}
 root.querySelector("img.lg-frame").src="data:image/png;base64,"+frames[f];
 root.setAttribute("data-frame",f);}}
root.querySelectorAll("input,select").forEach(function(el){{el.addEventListener("input",function(){{
 var i=+el.getAttribute("data-i");idx[i]=+el.value;var o=el.parentNode.querySelector("output");
 if(o){{o.textContent=values[i][idx[i]];}}show();}});}});
show();}})();</script></div>"""
    return FrameExplorer(
        html, frames, grid, draw=draw, dpi=dpi, labels=labels, start=start, discrete=tuple(discrete)
    )
