"""The built book, opened in headless Chromium: chapter zero shows its figure; the scorecard lists its claims.

Needs ``_build/html`` (``make html`` builds it first). Chromium comes from Debian's ``chromium``
package, installed here when missing; the tests skip with a message only where that fails.
"""
import os
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
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None and shutil.which("apt-get") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, timeout=600)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], env=env, capture_output=True, timeout=900)
        exe = shutil.which("chromium")
    if exe is None:
        pytest.skip("Chromium is not installed and could not be installed here (needs root and Debian's apt)")
    return exe


def render(chromium, page: Path, *extra) -> str:
    assert page.exists(), f"{page} missing: build the book first (make html)"
    with tempfile.TemporaryDirectory() as prof:
        r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                            "--disable-background-networking", "--disable-component-update", "--disable-sync",
                            f"--user-data-dir={prof}", "--virtual-time-budget=5000", *extra, page.as_uri()],
                           capture_output=True, text=True, timeout=180)
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


def test_scorecard_lists_chapter_zero_claims(chromium):
    from lengthgen.claims import load_ledger

    dom = render(chromium, HTML / "book" / "scorecard.html", "--dump-dom")
    ids = [r["id"] for r in load_ledger("ch0")]
    assert ids, "chapter zero has recorded no claims"
    for cid in ids:
        assert cid in dom, f"scorecard does not list {cid}"
    assert "reproduced" in dom
