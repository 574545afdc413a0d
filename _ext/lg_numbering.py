"""Number the book's figures and tables per chapter: "Figure 4.3" is the third figure of chapter 4
(its page, then its details page), so the book's numbers never collide with the papers' "paper
Fig. N". Pages outside the chapters number their own figures from 1.

Sphinx numbers figures across the whole book unless the table of contents is numbered, and a
numbered table of contents would call chapter 0 "1". This extension runs after Sphinx has assigned
its numbers (``env-get-updated``) and replaces each page's numbers by ``(chapter, k)``.
"""

from __future__ import annotations

import re

CHAPTER = re.compile(r"^notebooks/(\d\d)_")


def renumber(app, env):
    numbers = getattr(env, "toc_fignumbers", None) or {}
    by_group: dict[str, list[str]] = {}
    for doc in sorted(numbers):
        m = CHAPTER.match(doc)
        by_group.setdefault(m.group(1) if m else doc, []).append(doc)
    for group, docs in by_group.items():
        chapter = int(group) if group.isdigit() else None
        counters: dict[str, int] = {}
        for doc in docs:  # the chapter page sorts before its details page
            for figtype, ids in numbers[doc].items():
                for fid, _ in sorted(ids.items(), key=lambda kv: kv[1]):
                    counters[figtype] = counters.get(figtype, 0) + 1
                    k = counters[figtype]
                    ids[fid] = (chapter, k) if chapter is not None else (k,)
    return []


def setup(app):
    app.connect("env-get-updated", renumber, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
