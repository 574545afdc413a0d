"""ipywidgets explorers shared by the chapters.

:func:`explorer` wraps ``ipywidgets.interactive`` with the book's defaults (continuous update
off, a plot output that is replaced on each change). The returned widget is what a notebook cell
displays; tests call the plotting function directly.
"""
from __future__ import annotations


def explorer(fn, **controls):
    """An interactive explorer of ``fn``; ``controls`` map argument names to widgets or abbreviations."""
    import ipywidgets as w

    for c in controls.values():
        if isinstance(c, w.ValueWidget) and hasattr(c, "continuous_update"):
            c.continuous_update = False
    return w.interactive(fn, **controls)


def float_log_slider(description: str, value: float, lo_exp: float, hi_exp: float, step: float = 0.1):
    """A log-scale slider from 10**lo_exp to 10**hi_exp."""
    import ipywidgets as w

    return w.FloatLogSlider(value=value, base=10, min=lo_exp, max=hi_exp, step=step, description=description,
                            continuous_update=False)
