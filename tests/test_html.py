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
    assert (page.parent / src).resolve().stat().st_size > 5000, (
        "figure file missing or empty"
    )
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
        assert "\\(" not in visible_text(dom), (
            f"{page.name}: raw TeX left in the visible text"
        )


def test_no_visible_ledger_calls():
    """Bookkeeping (ledger calls, saves) is hidden in every chapter page."""
    for page in sorted((HTML / "notebooks").glob("*.html")):
        text = page.read_text()
        assert "ledger.check(" not in text and "ledger.save(" not in text, page.name
        assert "ledger.show(" not in text and "ledger.record(" not in text, page.name


PROBE = """<iframe id=f src="{src}" width=1280 height=900></iframe><script>
setTimeout(function(){{var d=document.getElementById('f').contentDocument, out=[];
d.querySelectorAll('.lg-explorer').forEach(function(ex){{
  var img=ex.querySelector('img.lg-frame'), before=img.src, c=ex.querySelector('input,select');
  if(c.tagName==='SELECT'){{c.selectedIndex=(c.selectedIndex+1)%c.options.length;}}
  else{{c.value=(+c.value+1)%(+c.max+1);}}
  c.dispatchEvent(new Event('input'));
  out.push(before.length>100 && img.src!==before ? 'changed' : 'same');}});
document.title='R'+out.join(',');}}, 3000);</script>"""


def test_every_explorer_changes_its_figure_without_a_kernel(chromium, tmp_path):
    import re

    pages = [
        p
        for p in sorted((HTML / "notebooks").glob("*.html"))
        if "lg-explorer" in p.read_text()
    ]
    assert pages, "no chapter has a static explorer"
    for page in pages:
        probe = tmp_path / f"probe_{page.stem}.html"
        probe.write_text(PROBE.format(src=page.as_uri()))
        out = render(chromium, probe, "--dump-dom", "--allow-file-access-from-files")
        m = re.search(r"<title>R([^<]*)</title>", out)
        assert m and m.group(1), (
            f"{page.name}: the probe found no explorer ({out[:200]})"
        )
        assert set(m.group(1).split(",")) == {"changed"}, (
            f"{page.name}: an explorer did not change: {m.group(1)}"
        )
