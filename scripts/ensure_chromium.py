"""Make sure headless Chromium is there for the HTML checks of ``make test`` (``make html``).

Chromium is found on the PATH; where it is missing and this runs as root on a Debian-like system,
Debian's ``chromium`` package is installed with apt, and this says so before it starts. ``APT=0``
(``make test APT=0``) never installs anything: the HTML checks then skip with a message.

    .venv/bin/python scripts/ensure_chromium.py
"""

import os
import shutil
import subprocess
import sys


def main() -> int:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        print(f"chromium: {exe}")
        return 0
    if os.environ.get("APT", "1") == "0":
        print("chromium: not installed and APT=0, so the HTML checks will be skipped")
        return 0
    if not shutil.which("apt-get") or os.geteuid() != 0:
        print(
            "chromium: not installed (install Debian's chromium, or run as root with apt); "
            "the HTML checks will be skipped"
        )
        return 0
    print(
        "chromium: installing Debian's chromium package with apt-get for the HTML checks "
        "(make test APT=0 skips this)",
        flush=True,
    )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd, limit in (
        (["apt-get", "update", "-qq"], 600),
        (["apt-get", "install", "-y", "-qq", "chromium"], 900),
    ):
        try:
            subprocess.run(cmd, env=env, capture_output=True, timeout=limit, check=True)
        except (OSError, subprocess.SubprocessError) as err:
            print(
                f"chromium: {' '.join(cmd)} failed ({type(err).__name__}); the HTML checks will be skipped"
            )
            return 0
    print(f"chromium: {shutil.which('chromium') or 'still missing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
