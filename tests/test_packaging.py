"""The README's statement of the tested versions agrees with pyproject.toml's lower bounds."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_names_the_lower_bounds_and_they_are_colabs_versions():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    lows = dict(re.match(r"([a-z-]+)>=([0-9.]+)", d).groups() for d in deps)
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Which versions are tested", 1)[1].split("\n## ", 1)[0]
    for name, low in lows.items():
        if name == "torch":
            assert "torch>=" + low in section and "2.13.0" in section
        else:
            assert f"{name} {low}" in section, (name, low)
    # the lower bounds are Colab's versions, where Colab's list pins the package
    lines = (ROOT / "ci" / "colab-versions.txt").read_text().splitlines()
    colab = dict(ln.split("==") for ln in lines if "==" in ln and ln[0] != "#")
    for name, low in lows.items():
        if name in colab:
            assert colab[name].startswith(low), (name, low, colab[name])


def test_colab_versions_satisfy_the_lower_bounds_and_are_documented():
    """Colab's preinstalled versions (ci/colab-versions.txt, which make test-colab installs)
    must satisfy pyproject.toml, since Colab's setup cell installs nothing; README and
    book/running.md list them."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    lows = dict(re.match(r"([a-z-]+)>=([0-9.]+)", d).groups() for d in deps)
    lines = (ROOT / "ci" / "colab-versions.txt").read_text().splitlines()
    colab = dict(ln.split("==") for ln in lines if "==" in ln and ln[0] != "#")
    assert {"torch", "ipywidgets", "matplotlib", "numpy"} <= set(colab)
    docs = (ROOT / "README.md").read_text() + (ROOT / "book" / "running.md").read_text()
    as_tuple = lambda v: tuple(int(x) for x in v.split("."))
    for name, version in colab.items():
        if name in lows:
            assert as_tuple(version) >= as_tuple(lows[name]), (name, version)
        assert f"{name} {version}".lower() in docs.lower(), name
