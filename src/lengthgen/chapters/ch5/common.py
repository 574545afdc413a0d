"""Chapter 5's one way to declare a prediction of ours on stored results (used by every claims
module of the chapter)."""

from __future__ import annotations

from lengthgen.claims import Claim


def stored_claim(
    cid, loc, statement, paper_value, check, why, measure, *, group="ours", **kw
) -> Claim:
    """A :class:`lengthgen.claims.Claim` on stored results: ``cid`` is the full id, ``loc`` the
    chapter section, ``group`` ``ours`` (a prediction) or ``self-check``."""
    return Claim(
        cid,
        loc,
        statement,
        paper_value,
        source="stored",
        measure=measure,
        check=check,
        why=why,
        group=group,
        **kw,
    )
