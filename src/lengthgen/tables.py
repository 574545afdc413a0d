"""The book's formatted tables: :func:`styled` (a DataFrame as the book's HTML table),
:func:`collapsible` (folded under a summary) and :func:`text_table` (the command line's)."""

from __future__ import annotations

import html as _html

from lengthgen.config import ConfigError


def styled(df, digits: int = 3, *, formats=None, caption=None, index=True, gradient=None):
    """``df`` as the book's HTML table: ``digits`` decimals for floats (``formats`` per column),
    the index as columns unless not ``index``, a column MultiIndex joined into strings,
    ``gradient`` columns (``True``: every float) shaded on a 0–1 scale."""
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise ConfigError(f"styled needs a pandas DataFrame, got {type(df).__name__}")
    df = df.reset_index(drop=True) if not index else df.copy()
    if isinstance(df.columns, pd.MultiIndex):
        df.columns = [" ".join(str(c) for c in col if str(c) != "") for col in df.columns]
    if not isinstance(df.index, pd.RangeIndex) or df.index.name is not None:
        df = df.reset_index()
    floats = [c for c in df.columns if pd.api.types.is_float_dtype(df[c])]
    fmt = {c: "{:,}" for c in df.columns if pd.api.types.is_integer_dtype(df[c])}  # not bool
    fmt |= {c: f"{{:.{digits}f}}" for c in floats} | (formats or {})
    sty = df.style.format(fmt, na_rep="—").hide(axis="index")
    if gradient is not None:
        cols = floats if gradient is True else list(gradient)
        sty = sty.background_gradient(cmap="Greens", vmin=0, vmax=1, subset=cols)
    if caption:
        sty = sty.set_caption(caption)
    return sty.set_table_styles(
        [{"selector": "td, th", "props": "padding: 2px 8px; font-size: 0.9em"}]
    )


class HTML:
    """An HTML string that a notebook displays (``_repr_html_``)."""

    def __init__(self, html: str):
        self.html = html

    def _repr_html_(self) -> str:
        return self.html


def collapsible(obj, summary: str, *, open: bool = False) -> HTML:
    """``obj`` (anything with ``_repr_html_``, e.g. a Styler) folded under ``summary``."""
    if not hasattr(obj, "_repr_html_") and not hasattr(obj, "to_html"):
        raise ConfigError(f"collapsible needs an object with HTML, got {type(obj).__name__}")
    body = obj.to_html() if hasattr(obj, "to_html") else obj._repr_html_()
    flag = " open" if open else ""
    return HTML(f"<details{flag}><summary>{_html.escape(summary)}</summary>{body}</details>")


def text_table(head, body) -> list[str]:
    """A plain-text table's lines, a dashed rule under the head (``cost`` and ``bench``)."""
    lines = [list(head)] + [list(row) for row in body]
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines]
    return out[:1] + ["  ".join("-" * w for w in widths)] + out[1:]
