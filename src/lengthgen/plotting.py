"""One house style for every figure of the book.

:func:`figure` returns a styled ``(fig, axes)``; :func:`finish` checks that every axis is
labelled (with units where they apply) before a figure is shown. The palette is Okabe–Ito,
which stays distinguishable under the common colour-vision deficiencies.
"""

from __future__ import annotations

from contextlib import contextmanager

#: Okabe–Ito colour-blind-safe palette.
PALETTE = [
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
]

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "legend.fontsize": 9,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.8,
}


def apply_style() -> None:
    """Apply the house style to matplotlib's global rcParams."""
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams.update(STYLE)
    mpl.rcParams["axes.prop_cycle"] = cycler(color=PALETTE)


@contextmanager
def style():
    """Context manager applying the house style temporarily."""
    import matplotlib as mpl
    from cycler import cycler

    with mpl.rc_context({**STYLE, "axes.prop_cycle": cycler(color=PALETTE)}):
        yield


def figure(
    nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float = 4.0, **kw
):
    """A styled figure; returns ``(fig, ax)`` or ``(fig, axes)`` as ``plt.subplots`` does."""
    import matplotlib.pyplot as plt

    apply_style()
    return plt.subplots(
        nrows,
        ncols,
        figsize=(width * ncols, height * nrows),
        squeeze=True,
        constrained_layout=True,
        **kw,
    )


def finish(fig, *, title: str | None = None):
    """Check every visible axis has x and y labels, set an optional title, return ``fig``."""
    for ax in fig.axes:
        if not ax.get_visible() or not ax.has_data():
            continue
        if not ax.get_xlabel() or not ax.get_ylabel():
            raise ValueError(f"axis {ax.get_title()!r} is missing an x or y label")
    if title:
        fig.suptitle(title)
    return fig
