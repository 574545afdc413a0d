"""One house style for every figure of the book: :func:`figure` returns a styled ``(fig, axes)``;
:func:`finish` checks labels and text sizes. The palette is Okabe–Ito (colour-blind safe)."""

from __future__ import annotations

PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]

#: matplotlib rcParams: resolution, text sizes, then grid, spines and lines
STYLE = {"figure.dpi": 110, "savefig.dpi": 150, "font.size": 11, "axes.titlesize": 12}
STYLE |= {"axes.labelsize": 11, "legend.fontsize": 9, "xtick.labelsize": 10, "ytick.labelsize": 10}
STYLE |= {"axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False}
STYLE |= {"axes.spines.right": False, "lines.linewidth": 1.8}


def apply_style() -> None:
    """Apply the house style and palette to matplotlib's global rcParams."""
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams.update({**STYLE, "axes.prop_cycle": cycler(color=PALETTE)})


def figure(nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float = 4.0, **kw):
    """A styled figure; returns ``(fig, ax)`` or ``(fig, axes)`` as ``plt.subplots`` does."""
    import matplotlib.pyplot as plt

    apply_style()
    size = (width * ncols, height * nrows)
    return plt.subplots(nrows, ncols, figsize=size, squeeze=True, constrained_layout=True, **kw)


#: the width of the book's text column in CSS pixels (1280 px window), and the smallest text a
#: figure may show when drawn at that width (9 pt = 12 CSS px)
COLUMN_PX = 662
MIN_TEXT_PT = 9.0


def displayed_text_pt(fig, column_px: int = COLUMN_PX) -> float:
    """The smallest visible text of ``fig`` in points as a reader sees it at the column's width
    (a wider figure is scaled down by ``column_px / (width in inches × 96)``)."""
    from matplotlib.text import Text

    fig.draw_without_rendering()  # tick labels exist once the figure is laid out
    scale = min(1.0, column_px / (fig.get_figwidth() * 96))
    sizes = [
        t.get_fontsize()
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.figure is fig
    ]
    return min(sizes) * scale if sizes else float("inf")


def finish(fig, *, title: str | None = None):
    """Check every visible axis has x and y labels and the smallest text is at least
    ``MIN_TEXT_PT`` at the column's width; set an optional title; return ``fig``."""
    for ax in fig.axes:
        if not ax.get_visible() or not ax.has_data():
            continue
        labels = (ax.get_xlabel(), ax.get_ylabel())
        # a colorbar is labelled along its length only (matplotlib names its axes so)
        if not (any if ax.get_label() == "<colorbar>" else all)(labels):
            raise ValueError(f"axis {ax.get_title()!r} is missing an x or y label")
    if title:
        fig.suptitle(title)
    pt = displayed_text_pt(fig)
    if pt < MIN_TEXT_PT:
        raise ValueError(
            f"the figure's smallest text would be {pt:.1f} pt at the column's width "
            f"(at least {MIN_TEXT_PT:g}): make the figure narrower or its text larger"
        )
    return fig
