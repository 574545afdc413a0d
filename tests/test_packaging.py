"""The README's statement of the tested versions agrees with pyproject.toml's lower bounds."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_names_the_lowest_versions_that_make_test_min_installs():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "dependencies"
    ]
    lows = dict(re.match(r"([a-z-]+)>=([0-9.]+)", d).groups() for d in deps)
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Which versions are tested", 1)[1].split("\n## ", 1)[0]
    for name, low in lows.items():
        if name == "torch":
            assert "torch>=" + low in section and "2.13.0" in section
        else:
            assert f"{name} {low}" in section, (name, low)
