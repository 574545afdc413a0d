"""Measure built pages of the book as a reader's browser shows them (headless Chromium, a
1280 × 900 window, network off): how many screens a page is, where its results box sits, and the
rendering defects the HTML tests guard against (tests/test_html.py).

    .venv/bin/python scripts/html_probe.py [_build/html/notebooks/04_sine_modular_addition.html ...]

Without arguments it measures every chapter page, details page and the scorecard. One screen is
900 px; a page's budget is 30 screens (``BUDGET``).

What it reports per page (the JavaScript below computes it in the page):
``screens``       document height / 900 px, every collapsed block left collapsed
``box_top``       top of the results box (``#results-box``) in px, or null
``math``          display equations whose content is wider than their box (a reader sees them
                  cut at the column's edge; MathJax would only let them scroll)
``dollars``       visible text (outside code and math) that still contains a ``$``
``images``        images drawn wider than their pixels (``naturalWidth < width``), and explorer
                  frames with fewer than twice their displayed pixels
``bookkeeping``   visible code cells whose every line only asserts, saves or records
``claim_ids``     the ``claim-…`` anchors on the page
``figures``       the numbers of the page's figure captions (``Figure 4.3`` → ``4.3``)
``placeholders``  visible text (outside code input and math) holding an unfilled format
                  placeholder (``{name}``, ``{x['k']:.2f}``)
``reprs``         visible text holding a Python repr (``{'``, ``': ``, ``[[``, ``None``, ``nan``)
``mathjax_errors`` MathJax's error nodes (an unknown macro or environment)
``clipped_badges`` status badges whose text is cut (wider than their box or their cell)
``page_width``    the document's scroll width (wider than ``window_width``: sideways scroll)
``box_rows``, ``rows``, ``box_text``, ``text``: the results box's rows, the page's claim rows
                  (paper, ours, status label by claim id) and the visible text, for the tests
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
SCREEN = (1280, 900)
BUDGET = 30

JS = r"""
function probe(d){
 var w=d.defaultView, out={};
 out.height=d.documentElement.scrollHeight; out.screens=out.height/900;
 var box=d.getElementById('results-box');
 out.box_top=box? box.getBoundingClientRect().top + w.scrollY : null;
 var main=d.querySelector('article')||d.querySelector('main')||d.body;
 var right=main.getBoundingClientRect().right;
 out.math=[];
 d.querySelectorAll('mjx-container[display="true"]').forEach(function(c){
   if(c.scrollWidth>c.clientWidth+1 || c.getBoundingClientRect().right>right+2){
     var tex=c.parentElement? c.parentElement.getAttribute('data-tex'):null;
     out.math.push({width:c.scrollWidth, box:c.clientWidth,
       text:(c.querySelector('mjx-assistive-mml')||c).textContent.slice(0,60)});}});
 out.dollars=[];
 var tw=d.createTreeWalker(main, NodeFilter.SHOW_TEXT, null), n;
 while((n=tw.nextNode())){
   if(n.nodeValue.indexOf('$')<0) continue;
   var el=n.parentElement, skip=false;
   while(el && el!==main){var t=el.tagName.toLowerCase();
     if(t==='code'||t==='pre'||t==='script'||t==='style'||t==='textarea'||t.indexOf('mjx')===0||
        (el.classList&&(el.classList.contains('cell_input')||el.classList.contains('highlight')))){skip=true;break;}
     el=el.parentElement;}
   if(!skip) out.dollars.push(n.nodeValue.trim().slice(0,80));}
 out.images=[];
 d.querySelectorAll('img').forEach(function(im){
   var shown=im.getBoundingClientRect().width; if(!shown||!im.naturalWidth) return;
   var need=im.classList.contains('lg-frame')? 1.9*shown : shown-1;
   if(im.naturalWidth<need) out.images.push({src:(im.getAttribute('src')||'').slice(0,60),
     natural:im.naturalWidth, shown:Math.round(shown), frame:im.classList.contains('lg-frame')});});
 out.bookkeeping=[];
 var keep=/^(assert\b|ledger\.(save|record|check)\(|.*\.save\(|save_|store\.|#|print\(f?["'](ok|saved))/;
 d.querySelectorAll('div.cell').forEach(function(c){
   if(c.className.match(/tag_(hide|remove)-(input|cell)/)) return;
   var pre=c.querySelector('.cell_input pre'); if(!pre) return;
   var lines=pre.textContent.split('\n').map(function(s){return s.trim();}).filter(Boolean);
   if(lines.length && lines.every(function(s){return keep.test(s);}))
     out.bookkeeping.push(lines[0].slice(0,80));});
 out.claim_ids=[]; d.querySelectorAll('details.lg-claim[id^="claim-"]').forEach(function(e){out.claim_ids.push(e.id.slice(6));});
 out.figures=[]; d.querySelectorAll('figcaption .caption-number, div.cell_output .caption-number, .caption-number').forEach(function(e){
   var m=e.textContent.match(/(\d+(\.\d+)*)/); if(m) out.figures.push(m[1]);});
 // visible text outside code cells' input, scripts and math: placeholders and Python reprs
 out.placeholders=[]; out.reprs=[];
 var ph=/\{[A-Za-z_][\w.]*(\[[^\]{}]*\])*(![rsa])?(:[^{}]*)?\}|\{[^{}]*:[<>^]?[+-]?\.?\d*[fgde%]\}/,
     rp=/\{'|[{,] ?'[^']{0,40}': |\[\[|(^|[:=(\[,] ?)None\b|\bnan\b/, nan=/\bNaN\b/;
 var tw3=d.createTreeWalker(main, NodeFilter.SHOW_TEXT, null), t3;
 while((t3=tw3.nextNode())){
   var v=t3.nodeValue; if(!ph.test(v) && !rp.test(v) && !nan.test(v)) continue;
   var e3=t3.parentElement, code=false;
   while(e3 && e3!==main){var tg=e3.tagName.toLowerCase();
     if(tg==='script'||tg==='style'||tg.indexOf('mjx')===0||tg==='code'||
        (e3.classList&&(e3.classList.contains('cell_input')||e3.classList.contains('math')))){code=true;break;}
     e3=e3.parentElement;}
   if(code) continue;
   var m3=v.match(ph); if(m3) out.placeholders.push(v.trim().slice(0,100));
   var out3=t3.parentElement.closest('.cell_output');
   if(rp.test(v) || (out3 && nan.test(v))) out.reprs.push(v.trim().slice(0,100));}
 out.mathjax_errors=[]; d.querySelectorAll('mjx-merror,[data-mjx-error]').forEach(function(e){
   out.mathjax_errors.push((e.getAttribute('data-mjx-error')||e.textContent).slice(0,100));});
 out.clipped_badges=[]; d.querySelectorAll('span.lg-badge').forEach(function(b){
   if(!b.offsetParent) return; var r=b.getBoundingClientRect(), q=b.parentElement.getBoundingClientRect();
   if(b.scrollWidth>b.clientWidth+1 || r.right>q.right+1) out.clipped_badges.push(b.textContent);});
 out.page_width=d.documentElement.scrollWidth; out.window_width=w.innerWidth;
 out.box_rows=[]; if(box) box.querySelectorAll('tr[data-claim]').forEach(function(tr){
   var td=tr.querySelectorAll('td'); out.box_rows.push({id:tr.getAttribute('data-claim'),
     paper:td[1].textContent, ours:td[2].textContent, label:td[3].textContent});});
 out.rows={}; d.querySelectorAll('details.lg-claim[id^="claim-"]').forEach(function(e){
   var sp=e.querySelectorAll('summary>span');
   out.rows[e.id.slice(6)]={paper:sp[1].textContent, ours:sp[2].textContent, label:sp[3].textContent};});
 out.box_text=box? box.textContent : null; out.text=main.innerText;
 out.codelines=0; d.querySelectorAll('div.cell').forEach(function(c){
   if(c.className.match(/tag_(hide|remove)-(input|cell)/)) return;
   var pre=c.querySelector('.cell_input pre'); if(pre) out.codelines+=pre.textContent.trim().split('\n').length;});
 return out;}
"""


# Measure only once every frame has loaded and MathJax (on pages that load it) has finished its
# first typeset: a fixed delay measured raw TeX on a busy machine and typeset formulas on an idle
# one (chapter 3's kernel table is 4 px wider than a phone only once typeset).
WAIT_THEN_PROBE = """
function ready(w){var d=w.document; if(d.readyState!=='complete') return false;
 if(!d.querySelector('script[src*="mathjax"]')) return true;
 return !!(w.MathJax && w.MathJax.startup && w.MathJax.startup.promise);}
function frames(){return ws.map(function(w){return document.getElementById('f'+w).contentWindow;});}
function done(){var r={}; ws.forEach(function(w){
  r[w]=probe(document.getElementById('f'+w).contentDocument);});
 document.getElementById('out').textContent='PROBE'+JSON.stringify(r)+'EBORP';}
function poll(){ if(!frames().every(ready)) return setTimeout(poll, 250);
 Promise.all(frames().map(function(w){return w.MathJax ? w.MathJax.startup.promise : null;}))
   .then(function(){setTimeout(done, 500);});}
setTimeout(poll, 500);
"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(exe: str, page: Path, *extra: str, timeout: int = 240) -> str:
    with tempfile.TemporaryDirectory() as prof:
        r = subprocess.run(
            [
                exe,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                f"--user-data-dir={prof}",
                "--virtual-time-budget=20000",
                "--allow-file-access-from-files",
                *extra,
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    return r.stdout


def probe(page: Path, exe: str | None = None, width: int = SCREEN[0]) -> dict:
    """The measurements above for one built page (a file under ``_build/html``) in a window
    ``width`` px wide (a phone: 390)."""
    return probe_widths(page, exe, (width,))[width]


def probe_widths(page: Path, exe: str | None = None, widths=(SCREEN[0],)) -> dict:
    """:func:`probe` at each of ``widths``, ``{width: measurements}``, from one Chromium process
    (one frame per width: the browser's start-up is most of a probe's time)."""
    exe = exe or chromium()
    if exe is None:
        raise SystemExit("Chromium is not installed (scripts/ensure_chromium.py)")
    page = Path(page).resolve()
    if not page.exists():
        raise SystemExit(f"{page} missing: build the book first (make html)")
    frames = "".join(
        f'<iframe id=f{w} src="{page.as_uri()}" width={w} height={SCREEN[1]} '
        'style="border:0;display:block"></iframe>'
        for w in widths
    )
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "probe.html"
        p.write_text(
            frames + "<pre id=out></pre><script>" + JS + "\n"
            f"var ws={json.dumps(list(widths))};" + WAIT_THEN_PROBE + "</script>"
        )
        dom = _run(exe, p, "--dump-dom")
    m = re.search(r"PROBE(.*?)EBORP", dom, re.S)
    if not m:
        raise RuntimeError(f"the probe of {page.name} returned nothing: {dom[:300]}")
    import html as _h

    return {int(w): r for w, r in json.loads(_h.unescape(m.group(1))).items()}


def default_pages() -> list[Path]:
    return sorted((HTML / "notebooks").glob("*.html")) + [HTML / "book" / "scorecard.html"]


def main(argv: list[str]) -> int:
    pages = [Path(a) for a in argv] or default_pages()
    print(f"{'page':48s} screens  box_top  math  $  images  bookkeeping  code lines")
    for page in pages:
        r = probe(page)
        print(
            f"{page.name:48s} {r['screens']:7.1f}  {str(round(r['box_top'])) if r['box_top'] is not None else '—':>7s}"
            f"  {len(r['math']):4d} {len(r['dollars']):2d}  {len(r['images']):6d}  {len(r['bookkeeping']):11d}"
            f"  {r['codelines']:10d}"
        )
        for k in (
            "math",
            "dollars",
            "images",
            "bookkeeping",
            "placeholders",
            "reprs",
            "mathjax_errors",
            "clipped_badges",
        ):
            for item in r[k][:5]:
                print(f"    {k}: {item}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
