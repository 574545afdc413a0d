"""Figure labels a reader can read (issue 36): :func:`overlapping_texts` finds texts of a
figure drawn on top of each other."""

import matplotlib

matplotlib.use("Agg")

from lengthgen import plotting  # noqa: E402


def overlapping_texts(fig) -> list[tuple[str, str]]:
    """The pairs of visible texts of ``fig`` (labels, annotations, titles, legends, on any of its
    axes) whose drawn boxes overlap by more than a pixel: labels a reader cannot read."""
    from matplotlib.text import Text

    fig.draw_without_rendering()
    box = lambda t: t.get_window_extent(fig.canvas.get_renderer())  # noqa: E731
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    pairs = [(box(a), box(b), a, b) for i, a in enumerate(texts) for b in texts[i + 1 :]]
    return [
        (a.get_text(), b.get_text())
        for p, q, a, b in pairs
        if min(p.x1, q.x1) - max(p.x0, q.x0) > 1 and min(p.y1, q.y1) - max(p.y0, q.y0) > 1
    ]


def _fig(*texts):
    fig, ax = plotting.figure(width=4, height=3)
    ax.plot([0, 1], [0, 1])
    ax.set(xlabel="x", ylabel="y")
    for x, s in texts:
        ax.text(x, 0.5, s)
    return fig


def test_overlapping_labels_are_found_and_separate_ones_are_not():
    assert overlapping_texts(_fig((0.5, "hello"), (0.52, "world"))) == [("hello", "world")]
    assert overlapping_texts(_fig((0.1, "hello"), (0.7, "world"))) == []


def test_chapter_3_heatmap_labels_do_not_overlap():
    from lengthgen.chapters.ch3 import figures as f3

    cells = {f"{e}/{t}": 0.5 for e in f3.ENCODINGS for t in f3.MAIN_TASKS}
    paper = {k: (1.0 if i % 2 else 0.1) for i, k in enumerate(cells)}
    fig = f3.plot_heatmaps(cells, cells, paper_lg60=paper)
    assert overlapping_texts(fig) == []


def test_finish_asks_a_colorbar_for_its_label_along_its_length_only():
    import pytest

    fig = _fig()
    bar = fig.colorbar(fig.axes[0].imshow([[0, 1]]), ax=fig.axes[0])
    with pytest.raises(ValueError, match="missing an x or y label"):
        plotting.finish(fig)
    bar.set_label("fraction")
    assert plotting.finish(fig) is fig
