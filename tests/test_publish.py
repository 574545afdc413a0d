"""The publish workflow parses, runs the README's build command and deploys the built HTML with the
official GitHub Pages actions; the Chromium step of ``make html`` honours APT=0."""

import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_workflow_builds_with_the_readme_command_and_deploys_pages():
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads the key `on` as True
    assert on["push"]["branches"] == ["main"]
    build = wf["jobs"]["build"]["steps"]
    runs = " ".join(s.get("run", "") for s in build)
    readme = (ROOT / "README.md").read_text()
    assert re.search(r"^make book\b", readme, re.M), "the README's build command"
    assert "make book" in runs and "download.pytorch.org/whl/cpu" in runs
    uses = [s.get("uses", "") for s in build] + [
        s.get("uses", "") for s in wf["jobs"]["deploy"]["steps"]
    ]
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    assert any(u.startswith("actions/deploy-pages@") for u in uses)
    art = next(s for s in build if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert art["with"]["path"] == "_build/html"
    assert wf["permissions"]["pages"] == "write" and wf["permissions"]["id-token"] == "write"


def test_ensure_chromium_installs_nothing_with_apt_0(monkeypatch, tmp_path):
    env = {"PATH": str(tmp_path), "APT": "0"}  # no chromium on this PATH
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "ensure_chromium.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and "APT=0" in out.stdout and "installing" not in out.stdout
