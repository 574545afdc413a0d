"""The built book, opened in headless Chromium: chapter zero shows its figure; the scorecard lists its claims.

Needs ``_build/html`` (``make html`` builds it first) and Chromium (``make html`` runs
``scripts/ensure_chromium.py``, which installs Debian's package where it can, visibly, unless
``APT=0``); the tests skip with a message where Chromium is missing.
"""

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.html
ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="module")
def chromium():
    """Chromium from the PATH (``make html`` runs ``scripts/ensure_chromium.py`` first, which
    installs Debian's package where it can and says so; ``APT=0`` skips that)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip(
            "Chromium is not installed (scripts/ensure_chromium.py installs it as root with apt)"
        )
    return exe


def render(chromium, page: Path, *extra) -> str:
    assert page.exists(), f"{page} missing: build the book first (make html)"
    with tempfile.TemporaryDirectory() as prof:
        r = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--host-resolver-rules=MAP * ~NOTFOUND",  # no network: the book is offline
                f"--user-data-dir={prof}",
                "--virtual-time-budget=5000",
                *extra,
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=180,
        )
    return r.stdout


def test_chapter_zero_shows_figure(chromium, tmp_path):
    page = HTML / "notebooks" / "00_attention_dilution.html"
    dom = render(chromium, page, "--dump-dom")
    assert "Attention dilution" in dom
    imgs = [s for s in dom.split("<img")[1:] if ".png" in s.split(">")[0]]
    assert imgs, "chapter zero shows no PNG figure"
    src = imgs[0].split('src="')[1].split('"')[0]
    assert (page.parent / src).resolve().stat().st_size > 5000, "figure file missing or empty"
    shot = tmp_path / "ch0.png"
    render(chromium, page, f"--screenshot={shot}", "--window-size=1200,2400")
    assert shot.exists() and shot.stat().st_size > 10_000


def visible_text(dom: str) -> str:
    import re

    body = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"<[^>]+>", " ", body)


def test_scorecard_shows_every_claim_and_the_totals(chromium, tmp_path):
    from lengthgen.claims import load_all

    dom = render(chromium, HTML / "book" / "scorecard.html", "--dump-dom")
    text = visible_text(dom)
    rows = load_all()
    assert rows, "no claims recorded"
    for r in rows:
        assert f'id="claim-{r["id"]}"' in dom, f"scorecard has no row for {r['id']}"
    import html as _h

    for r in rows[:: max(1, len(rows) // 25)]:  # statements are shown as text
        assert _h.escape(r["statement"], quote=False)[:60] in dom, r["id"]
    assert "lg-totals" in dom and "paper claims" in text
    assert "0.6655000000000001" not in text and "{'" not in text  # no raw reprs
    # the page fits a 1280 px window: no horizontal scrolling
    probe = tmp_path / "probe.html"
    probe.write_text(
        f'<iframe id=f src="{(HTML / "book" / "scorecard.html").as_uri()}" width=1280 height=900>'
        "</iframe><script>setTimeout(()=>{{const d=document.getElementById('f').contentDocument;"
        "document.title='W'+d.documentElement.scrollWidth;}},3000)</script>"
    )
    out = render(chromium, probe, "--dump-dom", "--allow-file-access-from-files")
    import re

    m = re.search(r"<title>W(\d+)</title>", out)
    assert m and int(m.group(1)) <= 1280, (
        f"scorecard is wider than 1280 px: {m.group(1) if m else out[:200]}"
    )


def test_math_is_rendered_offline(chromium):
    for page in (
        HTML / "book" / "intro.html",
        HTML / "notebooks" / "00_attention_dilution.html",
    ):
        dom = render(chromium, page, "--dump-dom")
        assert "<mjx-container" in dom, (
            f"{page.name}: MathJax did not render (is it shipped with the book?)"
        )
        assert "\\(" not in visible_text(dom), f"{page.name}: raw TeX left in the visible text"


def test_no_visible_ledger_calls():
    """Bookkeeping (ledger calls, saves) is hidden in every chapter page."""
    for page in sorted((HTML / "notebooks").glob("*.html")):
        text = page.read_text()
        assert "ledger.check(" not in text and "ledger.save(" not in text, page.name
        assert "ledger.show(" not in text and "ledger.record(" not in text, page.name


PROBE = """<iframe id=f src="{src}" width=1280 height=900></iframe><script>
setTimeout(function(){{var d=document.getElementById('f').contentDocument, out=[];
d.querySelectorAll('.lg-explorer').forEach(function(ex){{
  var img=ex.querySelector('img.lg-frame');
  ex.querySelectorAll('input,select').forEach(function(c){{
    var n=c.tagName==='SELECT'? c.options.length : (+c.max+1), start=+(c.tagName==='SELECT'? c.selectedIndex : c.value);
    for(var k=1;k<=n;k++){{
      var before=img.src, v=(start+k)%n;
      if(c.tagName==='SELECT'){{c.selectedIndex=v;}} else {{c.value=v;}}
      c.dispatchEvent(new Event('input'));
      out.push(before.length>100 && img.src!==before ? 'changed' : 'same@'+(c.getAttribute('data-i'))+':'+v);}}
  }});}});
document.title='R'+out.join(',');}}, 3000);</script>"""


def test_every_explorer_changes_its_figure_without_a_kernel(chromium, tmp_path):
    import re

    pages = [
        p for p in sorted((HTML / "notebooks").glob("*.html")) if "lg-explorer" in p.read_text()
    ]
    assert pages, "no chapter has a static explorer"
    for page in pages:
        probe = tmp_path / f"probe_{page.stem}.html"
        probe.write_text(PROBE.format(src=page.as_uri()))
        out = render(chromium, probe, "--dump-dom", "--allow-file-access-from-files")
        m = re.search(r"<title>R([^<]*)</title>", out)
        assert m and m.group(1), f"{page.name}: the probe found no explorer ({out[:200]})"
        steps = m.group(1).split(",")
        assert set(steps) == {"changed"}, (
            f"{page.name}: an explorer option did not change the figure: "
            f"{[s for s in steps if s != 'changed'][:5]}"
        )


# --------------------------------------------------------------------------- a reader's pages
import sys as _sys  # noqa: E402

_sys.path.insert(0, str(ROOT / "scripts"))
import html_probe  # noqa: E402

CHAPTER_PAGES = sorted(
    p for p in (HTML / "notebooks").glob("[0-9][0-9]_*.html") if "_details" not in p.name
)
DETAIL_PAGES = sorted((HTML / "notebooks").glob("[0-9][0-9]_*_details.html"))
#: screens of 900 px at 1280 px wide: a chapter page and the scorecard tell their story within
#: 30; a details page, which holds what the chapter links to, within 60
BUDGET = {"chapter": 30, "details": 60, "scorecard": 30}


#: every page of the book: the chapters, their details pages and the book's own pages
EVERY_PAGE = CHAPTER_PAGES + DETAIL_PAGES + sorted((HTML / "book").glob("*.html"))
#: a phone's window (CSS px)
PHONE = 390


@pytest.fixture(scope="module")
def _probed(chromium):
    """Every page probed at 1280 px and at a phone's width (one Chromium process per page)."""
    widths = (html_probe.SCREEN[0], PHONE)
    return {p.name: html_probe.probe_widths(p, chromium, widths) for p in EVERY_PAGE}


@pytest.fixture(scope="module")
def probes(_probed):
    return {n: r[html_probe.SCREEN[0]] for n, r in _probed.items()}


@pytest.fixture(scope="module")
def phone(_probed):
    return {n: r[PHONE] for n, r in _probed.items()}


def test_every_chapter_has_a_details_page():
    """Chapters 1-5 each have a details page (chapter 0 is short)."""
    assert len(CHAPTER_PAGES) == 6 and len(DETAIL_PAGES) == 5
    assert sorted(p.name[:2] for p in DETAIL_PAGES) == ["01", "02", "03", "04", "05"]
    for d in DETAIL_PAGES:
        assert HTML / "notebooks" / d.name.replace("_details", "") in CHAPTER_PAGES


def test_pages_fit_their_screen_budget(probes):
    over = []
    for name, r in probes.items():
        if name.startswith(("intro", "running", "cost", "engine", "notation", "refer")):
            continue
        kind = (
            "scorecard"
            if name == "scorecard.html"
            else "details"
            if "_details" in name
            else "chapter"
        )
        if r["screens"] > BUDGET[kind]:
            over.append(f"{name}: {r['screens']:.1f} screens > {BUDGET[kind]}")
    assert not over, "; ".join(over)


def test_results_box_is_on_the_first_screen(probes):
    for p in CHAPTER_PAGES:
        top = probes[p.name]["box_top"]
        assert top is not None, f"{p.name} has no results box"
        assert top < 900 - 150, f"{p.name}: the results box starts at {top:.0f} px"


@pytest.mark.parametrize(
    "defect, what",
    [
        ("math", "display math wider than its box"),
        ("dollars", "visible text with an unrendered $"),
        ("images", "an image with fewer pixels than it is drawn with (frames: 2x)"),
        ("bookkeeping", "a visible code cell that only asserts, saves or records"),
    ],
)
def test_no_rendering_defects(probes, defect, what):
    found = {n: r[defect] for n, r in probes.items() if r[defect]}
    assert not found, f"{what}: {found}"


def test_every_claim_is_shown_once_in_the_chapters(probes):
    from collections import Counter

    from lengthgen.claims import load_all

    shown = Counter(i for p in CHAPTER_PAGES + DETAIL_PAGES for i in probes[p.name]["claim_ids"])
    ids = [r["id"] for r in load_all()]
    twice = sorted(i for i, n in shown.items() if n > 1)
    missing = sorted(set(ids) - set(shown))
    unknown = sorted(set(shown) - set(ids))
    assert not twice, f"shown more than once: {twice[:10]}"
    assert not missing, f"never shown on a chapter page: {missing[:10]}"
    assert not unknown, f"shown but not in the ledger: {unknown[:10]}"
    assert set(probes["scorecard.html"]["claim_ids"]) == set(ids)


def test_figures_are_numbered_per_chapter(probes):
    for p in CHAPTER_PAGES + DETAIL_PAGES:
        n = int(p.name[:2])
        nums = probes[p.name]["figures"]
        bad = [f for f in nums if not f.startswith(f"{n}.")]
        assert not bad, f"{p.name}: figure numbers {bad} are not chapter {n}'s"
    main = {int(p.name[:2]): probes[p.name]["figures"] for p in CHAPTER_PAGES}
    assert any(main.values()), "no numbered figure in any chapter"


def test_papers_figures_are_cited_as_paper_figures():
    """The book's figures are "Figure 4.3"; a paper's are "paper Fig. N" (never a bare "Fig. N",
    which a reader would take for the book's); no "Knowl N" label a reader cannot look up."""
    import re

    bare = re.compile(r"(?<![Pp]aper )(?<![Pp]aper's )(?<![Pp]aper\u2019s )\bFigs?\.\s*\d")
    for p in CHAPTER_PAGES + DETAIL_PAGES:
        text = visible_text(p.read_text())
        hits = [text[max(0, m.start() - 30) : m.end() + 10] for m in bare.finditer(text)]
        assert not hits, f"{p.name}: bare figure citations {hits[:5]}"
        assert "Knowl" not in text, f"{p.name} still says 'Knowl'"


SCORE_PROBE = """<iframe id=f src="{src}" width=1280 height=900></iframe><pre id=out></pre><script>
setTimeout(function(){{var d=document.getElementById('f').contentDocument, out={{}};
var bar=d.getElementById('lg-filters'), rows=d.querySelectorAll('#lg-scorecard details.lg-claim');
function shown(){{var n=0; rows.forEach(function(r){{if(r.style.display!=='none') n++;}}); return n;}}
out.all=shown(); out.count=d.getElementById('lg-count').textContent;
var st=bar.querySelector('[name=status]'); st.value='deviates'; st.dispatchEvent(new Event('change',{{bubbles:true}}));
out.deviates=shown();
var ch=bar.querySelector('[name=chapter]'); ch.value='ch4'; ch.dispatchEvent(new Event('change',{{bubbles:true}}));
out.ch4_deviates=shown();
bar.querySelector('[name=reset]').click(); out.reset=shown();
var q=bar.querySelector('[name=q]'); q.value='{query}'; q.dispatchEvent(new Event('input',{{bubbles:true}}));
out.search=shown();
q.value='zzqxjnothing'; q.dispatchEvent(new Event('input',{{bubbles:true}}));
out.nothing=shown(); out.nothing_msg=!d.getElementById('lg-empty').hidden;
bar.querySelector('[name=reset]').click(); out.msg_after_reset=!d.getElementById('lg-empty').hidden;
var g=bar.querySelector('[name=group]'); g.value='ours'; g.dispatchEvent(new Event('change',{{bubbles:true}}));
out.ours=shown();
bar.querySelector('[name=reset]').click();
var so=bar.querySelector('[name=sort]'); so.value='status'; so.dispatchEvent(new Event('change',{{bubbles:true}}));
var order=[]; d.querySelectorAll('#lg-scorecard details.lg-claim').forEach(function(r){{order.push(r.getAttribute('data-status'));}});
out.sorted=order;
out.links=[]; d.querySelectorAll('a').forEach(function(a){{var h=a.getAttribute('href')||''; if(h.match(/ledger\\.(csv|json)$/)) out.links.push(h);}});
document.getElementById('out').textContent='PROBE'+JSON.stringify(out)+'EBORP';}}, 4000);</script>"""


def test_scorecard_filters_sorts_searches_and_downloads(chromium, tmp_path):
    import json
    import re

    from lengthgen.claims import CATEGORIES, category, load_all

    rows = load_all()
    query = "exact"
    probe = tmp_path / "score.html"
    probe.write_text(
        SCORE_PROBE.format(src=(HTML / "book" / "scorecard.html").as_uri(), query=query)
    )
    out = render(chromium, probe, "--dump-dom", "--allow-file-access-from-files")
    m = re.search(r"PROBE(.*?)EBORP", out, re.S)
    assert m, out[:300]
    import html as _h

    r = json.loads(_h.unescape(m.group(1)))
    assert r["all"] == len(rows) == r["reset"]
    assert r["count"] == f"{len(rows)} of {len(rows)} claims shown"
    assert r["deviates"] == sum(category(x) == "deviates" for x in rows)
    assert r["ch4_deviates"] == sum(
        category(x) == "deviates" and x["chapter"] == "ch4" for x in rows
    )
    hits = [
        x
        for x in rows
        if query in (x["statement"] + " " + x["location"]).lower()
        or query in json.dumps(x, ensure_ascii=False).lower()
    ]
    assert 0 < r["search"] <= len(hits)
    # an empty search says so; the "ours" kind isolates chapter 5's predictions
    assert r["nothing"] == 0 and r["nothing_msg"] and not r["msg_after_reset"]
    assert r["ours"] == sum(x.get("group") == "ours" for x in rows) > 0
    ranks = [list(CATEGORIES).index(s) for s in r["sorted"]]
    assert ranks == sorted(ranks)
    assert len(r["links"]) == 2
    for href in r["links"]:
        f = (HTML / "book" / href).resolve()
        assert f.exists() and f.stat().st_size > 1000, href


# --------------------------------------------------------------------------- proofreading (issue 36)
@pytest.mark.parametrize(
    "defect, what",
    [
        ("placeholders", "an unfilled format placeholder ({name}, {x:.2f})"),
        ("reprs", "a Python repr ({', ': , [[, None, nan)"),
        ("mathjax_errors", "a MathJax error (an unknown macro or environment)"),
        ("clipped_badges", "a status badge cut at its edge"),
    ],
)
def test_no_proofreading_defects(probes, phone, defect, what):
    """On every page, at 1280 px and on a phone: no template left unfilled, no Python repr, no
    MathJax error, no badge cut short."""
    found = {
        f"{n} at {w}": r[defect]
        for w, run in (("1280 px", probes), (f"{PHONE} px", phone))
        for n, r in run.items()
        if r[defect]
    }
    assert not found, f"{what}: {found}"


def test_no_sideways_scroll_on_a_phone(phone):
    wide = {n: r["page_width"] for n, r in phone.items() if r["page_width"] > PHONE + 1}
    assert not wide, f"pages wider than a {PHONE} px phone (px): {wide}"


def test_results_box_rows_are_the_ledgers(probes):
    """A results box shows each claim as the ledger has it (paper, ours and verdict drawn by the
    same formatter as the claim's row), and where the page also shows that claim's row, the row
    gives the same verdict."""
    from lengthgen.claims import load_all
    from lengthgen.pages import _label, cell_values

    ledger = {r["id"]: r for r in load_all()}
    bad = []
    for p in CHAPTER_PAGES:
        r = probes[p.name]
        assert r["box_rows"] or p.name.startswith("00"), f"{p.name}: empty results box"
        for row in r["box_rows"]:
            rec = ledger[row["id"]]
            want = (*cell_values(rec, 60), _label(rec))
            got = (row["paper"], row["ours"], row["label"])
            if got != want:
                bad.append(f"{p.name} {row['id']}: box {got} vs ledger {want}")
            shown = r["rows"].get(row["id"])
            if shown and shown["label"] != row["label"]:
                bad.append(f"{p.name} {row['id']}: box {row['label']}, row {shown['label']}")
    assert not bad, "; ".join(bad)


_COUNT = r"\d+ (?:reproduced|direction|deviates|not-reproducible|not-attempted|held in direction|held|failed)"


def test_closing_counts_agree_with_the_results_box(probes):
    """Every count line a chapter page prints ("33 held · 2 held in direction · 4 failed") is one
    of its results box's."""
    import re

    line = re.compile(rf"{_COUNT}(?: · {_COUNT})+")
    bad = []
    for p in CHAPTER_PAGES:
        r = probes[p.name]
        box = set(line.findall(r["box_text"] or ""))
        for found in line.findall(r["text"]):
            if found not in box:
                bad.append(f"{p.name}: '{found}' is not the box's {sorted(box)}")
    assert not bad, "; ".join(bad)


def test_nbval_markers_are_not_shown():
    """nbval's marker is a cell tag, never a comment a reader sees in the code."""
    for page in EVERY_PAGE:
        assert "NBVAL_CHECK_OUTPUT" not in page.read_text(), page.name
