"""Screenshots of the built documentation site in headless Chromium, and checks of what they show.

The site is served on ``127.0.0.1`` and six pages are opened at a desktop width (1280 px): the
home page, a guide page with maths, an API page, the gallery and two example pages. Each page
gets a screenshot ``<name>.png`` in ``--out`` (and, with ``--scroll``, one more of the part of
the page that the check is about: the first formula, table or figure). The script checks, on
every page:

- that the page makes no request to a host other than the local server (the site promises to
  work offline; any such request is blocked and reported);
- that nothing is wider than its column (the article, or the navigation on either side of it)
  unless it sits in a box that scrolls sideways, and that the page itself does not scroll
  sideways;
- that the formulas were typeset (MathJax left no ``\\(...\\)`` source on the guide page);

and that the snippets of a search (``search.html?q=...``) show no TeX source. It prints one line
per page and exits 1 when a check fails.

Needs the site built (``python -m sphinx -b html docs docs/_build/html``), Chromium (Debian:
``apt-get install chromium``) and Playwright, which drives it; the browser Playwright downloads
itself is not needed::

    python -m venv build/shots-venv && build/shots-venv/bin/pip install playwright
    build/shots-venv/bin/python docs/tools/screenshots.py docs/_build/html --out build/shots-png

``--chromium`` names the browser's executable (default: ``chromium`` on the ``PATH``).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

#: (name of the shot, page, selector of the part shown by ``--scroll``)
PAGES = [
    ("home", "index.html", None),
    ("guide-maths", "guide/nystrom.html", "div.math"),
    ("api", "api/generated/sparsekit.Nystroem.html", "dl.py.method"),
    ("gallery", "auto_examples/index.html", "div.sphx-glr-thumbcontainer"),
    ("example-kernel-kmeans", "auto_examples/kernel_kmeans.html", "img.sphx-glr-single-img"),
    ("example-nn-nystrom", "auto_examples/nn_nystrom.html", "table"),
]

#: a word of the guide that appears next to formulas, for the search check
SEARCH = "landmarks"

#: the columns of a page: the article, and the navigation on its left and right
COLUMNS = ["article.bd-article", ".bd-sidebar-primary", ".bd-sidebar-secondary"]

#: per column, the elements wider than it that no sideways-scrolling box inside it holds (a
#: sidebar clips what sticks out: the end of a long name is lost), and the page's own overflow
OVERFLOW = """(selectors) => {
  const found = {page: document.documentElement.scrollWidth - window.innerWidth, wide: []};
  for (const selector of selectors) {
    const column = document.querySelector(selector);
    if (!column || !column.getBoundingClientRect().width) continue;
    const right = column.getBoundingClientRect().right + 1;
    const held = (el) => {
      for (let a = el.parentElement; a && a !== column; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== "visible") return true;
      }
      return false;
    };
    for (const el of column.querySelectorAll("*")) {
      const box = el.getBoundingClientRect();
      if (box.width && box.right > right && !held(el)) {
        const name = `${el.tagName.toLowerCase()}.${[...el.classList].join(".")}`;
        found.wide.push(`${selector}: ${name} (${Math.round(box.right - right)} px)`);
      }
    }
  }
  found.wide = found.wide.slice(0, 6);
  return found;
}"""


def serve(site: Path):
    """A quiet HTTP server of ``site`` on a free local port, in a daemon thread."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def check_page(page, url, external):
    """Open ``url``; the failed checks, as lines."""
    failures = []
    page.goto(url, wait_until="networkidle")
    page.evaluate("() => window.MathJax?.startup?.promise")  # typeset before measuring
    if external:
        failures += [f"request to another host: {u}" for u in sorted(set(external))]
        external.clear()
    found = page.evaluate(OVERFLOW, COLUMNS)
    if found["page"] > 1:
        failures.append(f"the page scrolls sideways by {found['page']} px")
    if found["wide"]:
        failures.append(f"wider than their column: {', '.join(found['wide'])}")
    tex = page.evaluate(
        "() => [...document.querySelectorAll('.math')]"
        ".filter((m) => /\\\\[(\\[]/.test(m.textContent)).length"
    )
    if tex:
        failures.append(f"{tex} formulas not typeset")
    return failures


def check_search(page, base, external):
    """Search for :data:`SEARCH`; the failed checks, as lines."""
    page.goto(f"{base}search.html?q={SEARCH}", wait_until="networkidle")
    page.wait_for_selector("#search-results p.context", timeout=30_000)
    snippets = page.eval_on_selector_all(
        "#search-results p.context", "ps => ps.map(p => p.innerText)"
    )
    failures = [f"snippet with TeX source: {s[:120]!r}" for s in snippets if "\\" in s]
    if external:
        failures += [f"request to another host: {u}" for u in sorted(set(external))]
    return failures, len(snippets)


def main(argv=None):
    ap = argparse.ArgumentParser(description=(__doc__ or " ").splitlines()[0])
    ap.add_argument("site", type=Path, help="the built site (docs/_build/html)")
    ap.add_argument("--out", type=Path, required=True, help="folder for the PNG files")
    ap.add_argument("--chromium", default=shutil.which("chromium"), help="Chromium's executable")
    ap.add_argument("--width", type=int, default=1280, help="window width in CSS pixels")
    ap.add_argument("--scroll", action="store_true", help="also shoot the part each check is about")
    args = ap.parse_args(argv)
    if not (args.site / "index.html").is_file():
        ap.error(f"{args.site}: no index.html; build the site first")
    if not args.chromium:
        ap.error("no chromium on the PATH: install it, or name it with --chromium")
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    server, base = serve(args.site.resolve())
    failed = False
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": args.width, "height": 900})
        external: list[str] = []

        def route(r):
            if urlsplit(r.request.url).hostname in ("127.0.0.1", "localhost"):
                return r.continue_()
            external.append(r.request.url)
            return r.abort()

        page.route("**/*", route)
        for name, path, part in PAGES:
            failures = check_page(page, base + path, external)
            page.screenshot(path=args.out / f"{name}.png")
            if args.scroll and part and page.locator(part).count():
                page.locator(part).first.scroll_into_view_if_needed()
                page.screenshot(path=args.out / f"{name}-part.png")
            failed |= bool(failures)
            print(f"{path}: {'; '.join(failures) or 'ok'}")
        failures, count = check_search(page, base, external)
        page.screenshot(path=args.out / "search.png")
        failed |= bool(failures)
        print(f"search.html?q={SEARCH}: {count} snippets; {'; '.join(failures) or 'ok'}")
        browser.close()
    server.shutdown()
    print(f"screenshots in {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
