"""The built documentation site works opened from disk: a nav link of a page reached by file:// opens that page,
not a directory listing (mkdocs.yml's ``use_directory_urls: false``). Skipped without mkdocs or Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mkdocs") is None and not (Path(sys.executable).parent / "mkdocs").exists(),
                    reason="mkdocs is not installed (pip install -e '.[docs]')")
@pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium")
def test_a_nav_link_of_the_site_opened_from_disk_opens_its_page(tmp_path):
    mkdocs = shutil.which("mkdocs") or str(Path(sys.executable).parent / "mkdocs")
    site = tmp_path / "site"
    subprocess.run([mkdocs, "build", "--quiet", "--site-dir", str(site)], cwd=ROOT, check=True, timeout=600)
    index = (site / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="([^"#:]+)" class="md-nav__link', index)
    target = next(h for h in links if "atlas" in h)
    assert target.endswith(".html"), f"the nav link {target!r} names a folder, which file:// shows as a listing"
    url = (site / target).resolve().as_uri()
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert "Index of" not in dom and "winnability atlas" in dom.lower()
