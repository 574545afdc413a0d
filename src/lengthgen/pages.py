"""The book's pages built from the claims ledger: the claims tables a notebook shows, the
scorecard page (totals, figure, every claim with filters; CSV download) and the results boxes.
Importing it gives :class:`lengthgen.claims.ClaimRows` its HTML."""

from __future__ import annotations

import ast
import csv
import functools
import inspect
import io
import json
from collections import Counter
from html import escape
from pathlib import Path

from lengthgen import claims as lc
from lengthgen.config import CHAPTERS, ConfigError
from lengthgen.tables import HTML

CHAPTERS_DIR = Path(__file__).resolve().parent / "chapters"


def scorecard(folder: str | Path | None = None) -> list[dict]:
    """The scorecard's totals, one ``{chapter or "all": Counter of categories and "total"}`` per
    group of :data:`lengthgen.claims.GROUPS` (paper claims, self-checks, predictions of ours)."""
    out = {g: {c: Counter() for c in (*CHAPTERS, "all")} for g in lc.GROUPS}
    for r in lc.load_all(folder):
        for c in (r["chapter"], "all"):
            out[r.get("group", "paper")][c].update((lc.category(r), "total"))
    return [out[g] for g in lc.GROUPS]


def _where(path: Path, line: int) -> str:
    return f"{path.resolve().relative_to(CHAPTERS_DIR.parents[2]).as_posix()}:{line}"


@functools.cache
def declared_at() -> dict[str, str]:
    """``{id: "src/lengthgen/chapters/ch1/claims.py:123"}``: the first literal of each id (claims
    modules first), outside the ``HEADLINE`` and ``DETAILS`` tables that only cite ids."""
    found: dict[str, str] = {}
    key = lambda p: (p.relative_to(CHAPTERS_DIR).parts[0], "claims" not in p.stem, p)
    for path in sorted(CHAPTERS_DIR.rglob("*.py"), key=key):
        tree = ast.parse(path.read_text(), filename=str(path))
        citing = {
            id(n)
            for a in ast.walk(tree)
            if isinstance(a, ast.Assign)
            and any(getattr(t, "id", "") in ("HEADLINE", "DETAILS") for t in a.targets)
            for n in ast.walk(a.value)
        }
        for node in ast.walk(tree):
            v = node.value if isinstance(node, ast.Constant) else None
            if isinstance(v, str) and v[:2] == "ch" and id(node) not in citing:
                found.setdefault(v, _where(path, node.lineno))
    return found


def measured_by(chapter: str, claim_id: str) -> str | None:
    """The function measuring stored claim ``claim_id`` and where it is defined (else ``None``)."""
    claim = {c.id: c for c in lc.chapter_claims(chapter).CLAIMS}.get(claim_id)
    if not isinstance(claim, lc.Claim) or claim.measure is None:
        return None
    fn = claim.measure
    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = inspect.unwrap(fn)
    try:
        line = inspect.getsourcelines(fn)[1]
        where = _where(Path(inspect.getsourcefile(fn)), line)
    except (TypeError, OSError, ValueError):
        where = "?"
    return f"{fn.__module__}.{fn.__qualname__} at {where}"


#: each category's colour (green, blue, orange, two greys)
_BADGE = dict(zip(lc.CATEGORIES, ("#1b7f3b", "#3465a4", "#b5470b", "#6b6b6b", "#8a8a8a")))
_CSS = """<style>
div.lg-claims{font-size:0.86em;margin:0.5em 0;border-top:1px solid #ccc}
div.lg-claims .lg-row,div.lg-claims details.lg-claim>summary{display:grid;
 grid-template-columns:minmax(0,56fr) minmax(0,15fr) minmax(0,15fr) minmax(7.5em,14fr);column-gap:8px;
 padding:3px 4px;border-bottom:1px solid #ddd;align-items:start}
div.lg-claims .lg-row{font-weight:bold}
div.lg-claims details.lg-claim>summary{cursor:pointer;list-style:none}
div.lg-claims details.lg-claim>summary::-webkit-details-marker{display:none}
div.lg-claims details.lg-claim>summary>span{overflow-wrap:break-word;min-width:0}
div.lg-claims details.lg-claim>summary>span:first-child::before{content:"\\25B8\\00a0";color:#777}
div.lg-claims details.lg-claim[open]>summary>span:first-child::before{content:"\\25BE\\00a0"}
div.lg-claims .lg-more{padding:4px 10px 6px 18px;border-bottom:1px solid #ddd;color:#444;
 overflow-wrap:break-word} div.lg-claims .lg-more code{overflow-wrap:anywhere}
div.lg-claims .lg-more p{margin:0 0 3px 0}
div.lg-claims a.lg-perma{color:#999;text-decoration:none;margin-left:4px}
span.lg-badge{display:inline-block;max-width:100%;box-sizing:border-box;padding:1px 6px;border-radius:8px;color:#fff;font-size:0.85em;white-space:nowrap} div.lg-wide{max-width:100%;overflow-x:auto}
table.lg-totals{border-collapse:collapse;font-size:0.82em;width:100%;table-layout:fixed;min-width:30em}
table.lg-totals td,table.lg-totals th{padding:2px 4px;border-bottom:1px solid #ddd;text-align:right;
 overflow-wrap:break-word} table.lg-totals td:first-child,table.lg-totals th:first-child{text-align:left;width:11%}
table.lg-totals span.lg-badge{white-space:normal}
div.lg-results{border:1px solid #bbb;border-radius:6px;padding:6px 10px;margin:0.4em 0 1em 0;font-size:0.9em}
div.lg-results table{width:100%;border-collapse:collapse;table-layout:fixed}
div.lg-results td,div.lg-results th{padding:2px 6px;border-bottom:1px solid #e3e3e3;vertical-align:top;
 text-align:left;overflow-wrap:break-word}
div.lg-results p{margin:0.3em 0}
</style>"""


def _esc(x) -> str:
    return escape(str(x))


def badge(cat: str, label: str | None = None) -> str:
    """A coloured status badge (HTML) for a scorecard category."""
    colour = _BADGE.get(cat, "#555")
    return f'<span class="lg-badge" style="background:{colour}">{_esc(label or cat)}</span>'


def short_value(v, width: int = 40) -> str:
    """A claim value in a few words (three entries, cut at a word past ``width`` characters)."""
    text = lc.fmt_value(v, items=3)
    if len(text) > width:
        text = text[:width].rsplit(" ", 1)[0].rstrip(",;:(") + " …"
    return text


def cell_values(r: dict, width: int = 40) -> tuple[str, str]:
    """A row's paper and ours cells; where both read the same but the claim deviates, the entry
    that differs (``entry 5 of 10: …``)."""
    p, o = r.get("paper_value"), r.get("our_value")
    paper, ours = short_value(p, width), short_value(o, width)
    if o is None and r.get("status") in ("not-reproducible", "not-attempted"):
        ours = "not checked"
    if paper == ours and r.get("status") == "deviates" and isinstance(p, list):
        if at := [i for i, (x, y) in enumerate(zip(p, o)) if x != y and len(p) == len(o)]:
            i = at[0]  # the first entry that differs
            paper, ours = (f"entry {i + 1} of {len(p)}: {lc.fmt_value(v[i])}" for v in (p, o))
    return paper, ours


#: the protocol a self-check or a prediction of ours is filed under (no paper's protocol)
_GROUP_PROTOCOL = {"self-check": "self-check", "ours": "our experiment"}


def claim_notes(r: dict, origin: bool = False) -> list[str]:
    """The collapsed part of a claim's row (HTML paragraphs); ``origin``: then its pointers into
    the code, where it is declared and what measures it."""
    prot = _GROUP_PROTOCOL.get(r.get("group"), lc.protocol_label(r))
    notes = []
    for key, name in (("paper_value", "paper"), ("our_value", "ours")):
        full = lc.fmt_value(r.get(key), items=40)
        if short_value(r.get(key)) != full:
            notes.append(f"<b>{name}, in full:</b> {_esc(full)}")
    notes.append(f"<b>check:</b> {_esc(r.get('check') or '—')} · <b>protocol:</b> {_esc(prot)}")
    if r.get("why"):
        notes.append(f"<b>why this check:</b> {_esc(r['why'])}")
    if r.get("interval"):
        lo, hi = (lc.fmt_value(x) for x in r["interval"])
        notes.append(f"<b>interval:</b> from {_esc(lo)} to {_esc(hi)}")
    if r.get("tolerance") is not None:
        notes.append(f"<b>tolerance:</b> ± {_esc(lc.fmt_value(r['tolerance']))}")
    if r.get("cause"):
        notes.append(f"<b>cause:</b> {_esc(r['cause'])}")
    if r.get("cause") == lc.PREDICTION_FAILED and not r.get("explanation"):
        came, want = (_esc(lc.fmt_value(r.get(k), items=12)) for k in ("our_value", "paper_value"))
        notes.append(f"<b>what came out instead:</b> {came}, where we predicted {want}")
    if r.get("explanation"):
        word = "why it deviates" if r["status"] == "deviates" else "reason"
        notes.append(f"<b>{word}:</b> {_esc(r['explanation'])}")
    if r.get("declared_deviation_holds"):
        notes.append("<b>note:</b> a deviation was declared but the check now holds")
    notes.append(f"<b>id:</b> <code>{_esc(r['id'])}</code> · {_esc(r.get('source') or '—')}")
    if origin and (where := declared_at().get(r["id"])):
        notes.append(f"<b>declared at:</b> <code>{_esc(where)}</code>")
    if origin and r.get("source") == "stored" and (fn := measured_by(r["chapter"], r["id"])):
        notes.append(f"<b>measured by:</b> <code>{_esc(fn)}</code>")
    return [f"<p>{n}</p>" for n in notes]


def _protocol(r: dict) -> str:
    return _GROUP_PROTOCOL.get(r.get("group"), r.get("protocol") or "—")


def claim_row(r: dict, *, where: bool = True, origin: bool = False) -> str:
    """One claim as one row (statement | paper | ours | status) opening to its details, with its
    permalink; the ``data-*`` attributes are what the scorecard filters and sorts on."""
    cat, rid, loc = lc.category(r), _esc(r["id"]), _esc(r["location"])
    attrs = (
        f'data-chapter="{_esc(r.get("chapter"))}" data-status="{_esc(cat)}" '
        f'data-check="{_esc(r.get("check") or "none")}" data-protocol="{_esc(_protocol(r))}" '
        f'data-group="{_esc(r.get("group", "paper"))}"'
    )
    paper, ours = cell_values(r)
    return (
        f'<details class="lg-claim" id="claim-{rid}" {attrs}><summary>'
        f"<span>{_esc(r['statement'])}{f' <i>({loc})</i>' if where else ''}"
        f'<a class="lg-perma" href="#claim-{rid}" title="link to this claim">#</a></span>'
        f"<span>{_esc(paper)}</span><span>{_esc(ours)}</span><span>{badge(cat, _label(r))}</span>"
        f'</summary><div class="lg-more">{"" if where else f"<p><b>where:</b> {loc}</p>"}'
        f"{''.join(claim_notes(r, origin))}</div></details>"
    )


def claims_html(rows: list[dict], *, css=True, where=True, origin=False) -> str:
    """Ledger records as the book's compact claims table (:func:`claim_row`)."""
    head = (
        '<div class="lg-claims"><div class="lg-row"><span>claim</span><span>paper</span>'
        "<span>ours</span><span>status</span></div>"
    )
    body = "".join(claim_row(r, where=where, origin=origin) for r in rows)
    return (_CSS if css else "") + head + body + "</div>"


def totals_html(folder: str | Path | None = None) -> str:
    """The scorecard's totals per chapter (paper claims; self-checks counted apart) as HTML."""
    paper, selfc, ours = scorecard(folder)
    out = [_CSS, '<div class="lg-wide"><table class="lg-totals"><thead><tr><th>chapter</th>']
    out += [f"<th>{badge(k)}</th>" for k in lc.CATEGORIES] + [
        "<th>paper claims</th><th>self-checks</th><th>our predictions (held)</th>"
        "</tr></thead><tbody>"
    ]
    for ch in (*CHAPTERS, "all"):
        cell = (lambda v: f"<b>{v}</b>") if ch == "all" else str
        mine = f"{ours[ch]['total']} ({_held(ours[ch])})" if ours[ch]["total"] else "—"
        out.append(
            f"<tr><td>{cell(ch)}</td>"
            + "".join(f"<td>{cell(paper[ch][k])}</td>" for k in (*lc.CATEGORIES, "total"))
            + f"<td>{cell(selfc[ch]['total'])}</td><td>{cell(mine)}</td></tr>"
        )
    out.append("</tbody></table></div>")
    return "".join(out)


TITLES = {
    "ch0": "Chapter 0 — attention dilution (background)",
    "ch1": "Chapter 1 — Chiang & Cholak (2022)",
    "ch2": "Chapter 2 — Zhu & Chiang (2026)",
    "ch3": "Chapter 3 — Han, Chai & Wang (2026)",
    "ch4": "Chapter 4 — Huang & Li (2025)",
    "ch5": "Chapter 5 — across the papers (our experiments)",
}


#: the columns of the ledger's CSV download (one row per claim; lists and dicts as JSON)
CSV_FIELDS = tuple(
    "id chapter group location statement paper_value our_value category status check "
    "tolerance interval protocol protocol_note cause explanation why source scale".split()
)


def ledger_csv(folder: str | Path | None = None) -> str:
    """Every chapter's ledger as CSV text (:data:`CSV_FIELDS`)."""
    cell = lambda v: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for r in lc.load_all(folder):
        vals = [lc.category(r) if k == "category" else r.get(k) for k in CSV_FIELDS]
        w.writerow("" if v is None else cell(v) for v in vals)  # None as an empty cell
    return buf.getvalue()


_FILTER_JS = """<script>
(function(){
var root=document.getElementById('lg-scorecard'); if(!root) return;
var rows=Array.prototype.slice.call(root.querySelectorAll('details.lg-claim'));
rows.forEach(function(r,i){r.setAttribute('data-order',i);});
var bar=document.getElementById('lg-filters'), count=document.getElementById('lg-count');
var rank={reproduced:0,direction:1,deviates:2,'not-reproducible':3,'not-attempted':4};
function val(name){return bar.querySelector('[name='+name+']').value;}
function apply(){
 var q=val('q').toLowerCase(), n=0;
 rows.forEach(function(r){
  var ok=['chapter','status','check','protocol','group'].every(function(k){
   var v=val(k); return !v || r.getAttribute('data-'+k)===v;});
  if(ok && q){ok=r.textContent.toLowerCase().indexOf(q)>=0;}
  r.style.display=ok?'':'none'; if(ok) n++;});
 count.textContent=n? n+' of '+rows.length+' claims shown'
  : 'No claim matches these filters and this search: change them, or press reset.';
 var empty=document.getElementById('lg-empty'); if(empty) empty.hidden=n>0;
 var key=val('sort'), sorted=rows.slice().sort(function(a,b){
  var x=+a.getAttribute('data-order'), y=+b.getAttribute('data-order');
  if(key==='status'){var d=rank[a.getAttribute('data-status')]-rank[b.getAttribute('data-status')]; if(d) return d;}
  if(key==='check'||key==='protocol'){var s=a.getAttribute('data-'+key).localeCompare(b.getAttribute('data-'+key)); if(s) return s;}
  if(key==='statement'){var t=a.querySelector('summary span').textContent.localeCompare(b.querySelector('summary span').textContent); if(t) return t;}
  return x-y;});
 sorted.forEach(function(r){root.appendChild(r);});}
bar.addEventListener('input',apply); bar.addEventListener('change',apply);
bar.querySelector('[name=reset]').addEventListener('click',function(){
 bar.querySelectorAll('select').forEach(function(s){s.selectedIndex=0;});
 bar.querySelector('[name=q]').value=''; apply();});
function openHash(){var h=decodeURIComponent(location.hash.slice(1)); if(h.indexOf('claim-')!==0) return;
 var el=document.getElementById(h); if(!el) return;
 if(el.style.display==='none'){bar.querySelector('[name=reset]').click();}
 el.open=true; el.scrollIntoView();}
window.addEventListener('hashchange',openHash);
apply(); openHash();
})();
</script>"""


#: the scorecard's filter options in words (a status pairs the papers' word with ours)
_STATUS_WORDS = {"reproduced": "reproduced / held", "deviates": "deviates / failed"}
_KIND_WORDS = {"paper": "paper claim", "ours": "our prediction (chapter 5)"}


def _options(name: str, label: str, values, words: dict | None = None) -> str:
    opts = "".join(
        f'<option value="{_esc(v)}">{_esc((words or {}).get(v, v))}</option>' for v in values
    )
    return (
        f'<label>{_esc(label)} <select name="{name}"><option value="">all</option>'
        f"{opts}</select></label>"
    )


def scorecard_markdown(folder=None, figure: str | None = None, downloads=None) -> str:
    """The scorecard page's body (MyST with raw HTML): totals, ``figure``, ``downloads`` (CSV,
    JSON), then every claim (:func:`claim_row`) with offline filters, a search and a sort."""
    rows, parts = lc.load_all(folder), [totals_html(folder), ""]
    if figure:
        caption = "Paper claims per chapter by status (self-checks not counted)."
        parts += [f"```{{figure}} {figure}", ":name: fig-scorecard-totals", ":width: 100%"]
        parts += ["", caption, "```", ""]
    if downloads:
        parts += [
            f"Download the whole ledger: {{download}}`CSV <{downloads[0]}>` · "
            f"{{download}}`JSON <{downloads[1]}>` (one record per claim, every field).",
            "",
        ]
    present = lambda k: sorted({r.get(k) or "none" for r in rows})
    filters = (
        '<div id="lg-filters" class="lg-filters">'
        + _options("chapter", "chapter", [c for c in CHAPTERS if c in present("chapter")])
        + _options("status", "status", lc.CATEGORIES, _STATUS_WORDS)
        + _options("check", "check", present("check"))
        + _options("protocol", "protocol", sorted({_protocol(r) for r in rows}))
        + _options("group", "kind", ["paper", "self-check", "ours"], _KIND_WORDS)
        + '<label>search <input name="q" type="search" size="18"></label>'
        '<label>sort <select name="sort"><option value="book">book order</option>'
        '<option value="status">status</option><option value="check">check kind</option>'
        '<option value="protocol">protocol</option><option value="statement">statement</option>'
        '</select></label><button type="button" name="reset">reset</button>'
        ' <span id="lg-count"></span></div>'
    )
    parts += [
        "## Every claim",
        "",
        "Each row opens to its check, protocol, justification and cause; **#** is the claim's "
        "permalink. Chapter 5's rows are our own predictions, fixed before their runs: one "
        "that holds reads **held** (counted as reproduced, or as direction where only the sign "
        "or order was predicted), one that does not reads **failed** (counted as deviates). "
        "Chapters: " + "; ".join(f"{c} = {TITLES[c].split(' — ')[1]}" for c in CHAPTERS) + ".",
        "",
        "<style>div.lg-filters{display:flex;flex-wrap:wrap;gap:6px 14px;font-size:0.86em;"
        "margin:0.4em 0;align-items:center} div.lg-filters select,div.lg-filters input"
        "{font-size:1em} #lg-scorecard{font-size:0.8em} #lg-scorecard .lg-row,"
        "#lg-scorecard details.lg-claim>summary{grid-template-columns:minmax(0,63fr) "
        "minmax(0,13fr) minmax(0,13fr) minmax(7.5em,11fr);line-height:1.35}</style>",
        filters,
        "",
        claims_html(rows, css=False, where=False, origin=True).replace(
            '<div class="lg-claims">', '<div class="lg-claims" id="lg-scorecard">', 1
        ),
        "",
        '<p id="lg-empty" hidden><b>No claim matches these filters and this search.</b> '
        "Change them, or press reset.</p>",
        "",
        _FILTER_JS,
        "",
    ]
    return "\n".join(parts) + "\n"


def scorecard_figure(path: str | Path, folder: str | Path | None = None) -> Path:
    """Save the bar chart of paper claims per chapter and status to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from lengthgen import plotting

    paper = scorecard(folder)[0]
    fig, ax = plotting.figure(width=6.4, height=2.4)
    left = [0] * len(CHAPTERS)
    for cat in lc.CATEGORIES:
        vals = [paper[c][cat] for c in CHAPTERS]
        ax.barh(CHAPTERS, vals, left=left, color=_BADGE[cat], label=cat)
        left = [a + b for a, b in zip(left, vals)]
    ax.invert_yaxis()
    ax.set(xlabel="paper claims (count)", ylabel="chapter")
    legend = dict(ncol=5, fontsize=9, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    ax.legend(frameon=False, handlelength=1.2, columnspacing=1.0, **legend)
    plotting.finish(fig)
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def results_box_markdown(folder: str | Path | None = None) -> str:
    """The intro page's results box (HTML): per chapter its ``HEADLINE`` finding and main
    deviation, linked to their scorecard rows, and its counts; then the book's totals."""
    paper, selfc, ours = scorecard(folder)

    def counts(ch: str) -> str:
        r, o, n = paper[ch], ours[ch], selfc[ch]["total"]
        out = " · ".join(f"{r[k]} {k}" for k in lc.CATEGORIES if r[k]) or "none"
        if o["total"]:
            mine = f"our predictions: {_held(o)} of {o['total']} held"
            out = mine if not r["total"] else f"{out}; {mine}"
        return out + (f" (and {n} self-checks)" if n else "")

    links = functools.partial(_links, "scorecard.html#claim-")
    out = [
        _CSS,
        '<div class="lg-results"><table class="lg-claims"><colgroup><col style="width:16%">'
        '<col style="width:34%"><col style="width:34%"><col style="width:16%"></colgroup><thead><tr>'
        "<th>chapter</th><th>main finding</th><th>main deviation</th><th>paper claims</th></tr></thead><tbody>",
    ]
    for ch in CHAPTERS:
        head = _headline(ch)
        out.append(f"<tr><td><b>{_esc(TITLES[ch])}</b></td>")
        for k in ("finding", "deviation"):
            ids = links(head.get(f"{k}_ids", []))
            out.append(f'<td data-label="main {k}">{_esc(head.get(k, "—"))} {ids}</td>')
        out.append(f'<td data-label="claims">{_esc(counts(ch))}</td></tr>')
    out.append(
        f"<tr><td><b>all chapters</b></td><td colspan=2><b>{paper['all']['total']} paper "
        f"claims:</b> {_esc(counts('all'))}</td><td></td></tr></tbody></table></div>"
    )
    return "".join(out) + "\n"


def _held(o: Counter) -> int:
    """How many of a chapter's predictions of ours held (in value or in direction)."""
    return o["reproduced"] + o["direction"]


def _headline(chapter: str) -> dict:
    return getattr(lc.chapter_claims(chapter), "HEADLINE", None) or {}


def _links(prefix: str, ids) -> str:
    return " ".join(f'<a href="{prefix}{_esc(i)}">[{n + 1}]</a>' for n, i in enumerate(ids))


def _label(r: dict) -> str:
    cat = lc.category(r)
    return lc.OURS_WORDS.get(cat, cat) if r.get("group") == "ours" else cat


def headline_claims(chapter: str) -> list[dict]:
    """The chapter's 3–5 headline claims ``[{"claim": words, "id": id}]`` from its
    ``HEADLINE["claims"]`` table ``{id: words}``."""
    table = _headline(chapter).get("claims") or {}
    items = [{"claim": words, "id": cid} for cid, words in table.items()]
    if not 3 <= len(items) <= 5 and chapter != "ch0":
        raise ConfigError(
            f"{chapter}: HEADLINE['claims'] lists {len(items)} claims; a results box shows 3 to 5"
        )
    return items


def _glance(rows: list[dict], shown: int) -> str:
    """A results box's first sentence: what the chapter checks and its counts (HTML)."""
    n = [r.get("group", "paper") for r in rows]
    n_paper, n_self, n_ours = (n.count(g) for g in ("paper", "self-check", "ours"))
    selfc = f" (and {n_self} self-checks of our own code)" if n_self else ""
    text = (
        f"Of the paper's {n_paper} claims we check here: {_esc(lc.counts_line(rows))}{selfc}"
        if n_paper
        else f"Our experiments, not the papers' claims: of our {n_ours} predictions, each "
        f"fixed before its run: {_esc(lc.counts_line(rows, 'ours'))}{selfc}"
        if n_ours
        else f"This chapter checks no paper's claims; it runs {n_self} self-checks of our own code"
    )
    more = f'; the table shows {shown}, the <a href="../book/scorecard.html">scorecard</a> all'
    return f"<p><b>Results at a glance.</b> {text}{more * (shown < len(rows))}.</p>"


def results_box(chapter: str, folder: str | Path | None = None):
    """The results box on a chapter's first screen: headline claims (paper, ours, verdict), the
    claim counts, the main deviation and the cost of its stored results."""
    from lengthgen import cost  # the page code may read the cost of the stored results

    rows = lc.load_ledger(chapter, folder)
    by_id = {r["id"]: r for r in rows}
    head, items = _headline(chapter), headline_claims(chapter)
    if missing := [it["id"] for it in items if it["id"] not in by_id]:
        raise ConfigError(f"{chapter}: headline claims not in its ledger: {', '.join(missing)}")
    link = "../book/scorecard.html#claim-"
    groups = {r.get("group", "paper") for r in rows}
    lab = "paper" if "paper" in groups else "predicted" if "ours" in groups else "expected"
    body = []
    for it in items:
        r = by_id[it["id"]]
        paper, ours = cell_values(r, 60)
        body.append(
            f'<tr data-claim="{_esc(r["id"])}"><td>{_esc(it["claim"])}</td>'
            f'<td data-label="{lab}">{_esc(paper)}</td><td data-label="ours">{_esc(ours)}</td>'
            f'<td><a href="{link}{_esc(r["id"])}">{badge(lc.category(r), _label(r))}</a></td></tr>'
        )
    c = cost.chapter_cost(chapter)
    spent = (
        f"its stored full-scale results took {cost.fmt_seconds(c['cpu_s'])} of CPU "
        f"(about {cost.fmt_seconds(c['projection_2core_s'])} on two cores)"
        if c["cpu_recorded"] and c["cpu_s"] >= 1
        else "its stored results take under a second to compute"
        if c["cpu_recorded"]
        else "it stores no full-scale results"
    )
    parts = [_CSS, '<div class="lg-results" id="results-box">', _glance(rows, len(items))]
    if body:
        what = {"paper": "the paper claims", "predicted": "we predicted"}.get(
            lab, "the chapter checks"
        )
        cols = "".join(f'<col style="width:{w}%">' for w in (55, 15, 15, 15))
        parts.append(
            f"<table><colgroup>{cols}</colgroup><thead><tr><th>{what}</th><th>{lab}</th>"
            f"<th>ours</th><th>verdict</th></tr></thead><tbody>{''.join(body)}</tbody></table>"
        )
    if dev := head.get("deviation"):
        dev_links = _links(link, head.get("deviation_ids", []))
        parts.append(f"<p><b>Main deviation.</b> {_esc(dev)} {dev_links}</p>")
    parts.append(
        f"<p><b>Cost.</b> This page executes at smoke scale in minutes; {spent}.</p></div>"
    )
    return HTML("".join(parts))


lc.ClaimRows.html = claims_html  # the ledger's claims tables display as this page code draws them
