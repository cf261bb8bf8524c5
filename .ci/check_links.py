"""Check the internal links of the built documentation site (no network).

Every relative ``href`` and ``src`` of every HTML page of the site (not the theme's files
under ``_static/``) must name a file that the
build wrote (fragments and query strings are ignored; so are absolute URLs, ``mailto:``,
``data:`` and ``javascript:`` links). Exits 1 and lists the broken links, else prints a count.

Usage: ``python .ci/check_links.py docs/_build/html``
"""

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.targets = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.targets.append(value)


def broken_links(site: Path):
    broken, checked = [], 0
    for page in sorted(site.rglob("*.html")):
        if page.relative_to(site).parts[0] in ("_static", "_sources"):
            continue  # files a theme ships (Jinja templates among them), not pages of the site
        parser = Links()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        for target in parser.targets:
            parts = urlsplit(target)
            if parts.scheme or parts.netloc or not parts.path:
                continue  # external, or a fragment/query on the page itself
            path = (page.parent / unquote(parts.path)).resolve()
            checked += 1
            if not path.exists():
                broken.append(f"{page.relative_to(site)}: {target}")
    return broken, checked


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    site = Path(argv[0])
    if not (site / "index.html").is_file():
        print(f"{site}: no index.html; build the site first", file=sys.stderr)
        return 2
    broken, checked = broken_links(site)
    for line in broken:
        print(f"broken link: {line}")
    print(f"{checked} internal links checked, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
