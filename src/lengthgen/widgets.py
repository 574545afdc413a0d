"""The chapters' explorers.

:func:`frame_explorer`: the figure is drawn at build time for every combination of a small grid of
settings, and a client-side control (plain HTML and a few lines of JavaScript, no kernel, no
network) swaps the frames. It works in the built HTML book, offline, and in Jupyter or Colab alike
(a kernel-backed ipywidgets explorer would show only its first figure in the static book).

Tests call the plotting functions directly and check that the frames differ.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import uuid

from lengthgen.config import ConfigError


def _png(fig, dpi: int) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


class FrameExplorer:
    """The HTML of a :func:`frame_explorer` (displayed through ``_repr_html_``); ``frames`` maps
    each combination of settings (a tuple, in ``grid`` order) to its PNG (base64)."""

    def __init__(self, html: str, frames: dict, grid: dict):
        self.html, self.frames, self.grid = html, frames, grid

    def _repr_html_(self) -> str:
        return self.html


def frame_explorer(
    draw,
    grid: dict,
    *,
    labels: dict | None = None,
    initial: dict | None = None,
    dpi: int = 80,
    width: str = "100%",
) -> FrameExplorer:
    """A kernel-free explorer: ``draw(**settings) -> matplotlib Figure`` is called for every
    combination of ``grid`` (``{argument: [values, …]}``, at most 200 combinations) and the
    figures are embedded as PNG frames; one control per argument (a slider over the listed
    values, or a drop-down for text values) picks the frame in the browser.

    ``labels`` names the controls (default: the argument names); ``initial`` picks the first frame
    shown (default: each argument's first value).
    """
    if not isinstance(grid, dict) or not grid:
        raise ConfigError("grid must be a non-empty dict {argument: [values, ...]}")
    names = list(grid)
    for k, vals in grid.items():
        if (
            isinstance(vals, (str, bytes))
            or not hasattr(vals, "__len__")
            or len(vals) == 0
        ):
            raise ConfigError(
                f"grid[{k!r}] must be a non-empty list of values, got {vals!r}"
            )
    combos = list(itertools.product(*(list(grid[k]) for k in names)))
    if len(combos) > 200:
        raise ConfigError(
            f"the grid has {len(combos)} combinations; at most 200 frames are embedded"
        )
    if not callable(draw):
        raise ConfigError(
            f"draw must be a function returning a matplotlib figure, got {draw!r}"
        )
    labels = {**{k: k for k in names}, **(labels or {})}
    initial = initial or {}
    for k, v in initial.items():
        if k not in grid or v not in list(grid[k]):
            raise ConfigError(
                f"initial value {k}={v!r} is not on the grid; values: {list(grid.get(k, []))}"
            )
    frames = {}
    for combo in combos:
        fig = draw(**dict(zip(names, combo)))
        frames[combo] = _png(fig, dpi)
    uid = "fx" + uuid.uuid4().hex[:10]
    start = [list(grid[k]).index(initial[k]) if k in initial else 0 for k in names]
    controls = []
    for i, k in enumerate(names):
        vals = list(grid[k])
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            controls.append(
                f'<label style="margin-right:1.2em">{labels[k]} '
                f'<input type="range" min="0" max="{len(vals) - 1}" step="1" value="{start[i]}" data-i="{i}" '
                f'style="vertical-align:middle"> <output>{vals[start[i]]}</output></label>'
            )
        else:
            opts = "".join(
                f'<option value="{j}"{" selected" if j == start[i] else ""}>{v}</option>'
                for j, v in enumerate(vals)
            )
            controls.append(
                f'<label style="margin-right:1.2em">{labels[k]} <select data-i="{i}">{opts}</select>'
                f"</label>"
            )
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
    return FrameExplorer(html, frames, grid)
