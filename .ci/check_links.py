"""Check the links of the built documentation site (no network).

Every relative ``href`` and ``src`` of every HTML page of the site (not the theme's files under
``_static/``) must name a file that the build wrote, and a fragment (``page.html#name``, or
``#name`` on the page itself) must name an element of that page (an ``id``, or an ``<a name>``).
Query strings are ignored; so are ``mailto:``, ``data:`` and ``javascript:`` links and links to
other sites. The site promises to work offline: a page that loads a script or a stylesheet from
another host (``<script src="https://...">``, ``<link rel="stylesheet" href="//...">``) is an
error too. Exits 1 and lists what it found, else prints a count.

Usage: ``python .ci/check_links.py docs/_build/html``
"""

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    """The links, the names (``id`` and ``<a name>``) and the external resources of a page."""

    def __init__(self):
        super().__init__()
        self.targets, self.names, self.external = [], set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("href", "src"):
            if attrs.get(name):
                self.targets.append(attrs[name])
        if attrs.get("id"):
            self.names.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.names.add(attrs["name"])
        resource = None
        if tag == "script":
            resource = attrs.get("src")
        elif tag == "link" and "stylesheet" in (attrs.get("rel") or "").split():
            resource = attrs.get("href")
        if resource and (
            urlsplit(resource).scheme in ("http", "https") or resource.startswith("//")
        ):
            self.external.append(f"<{tag}> {resource}")


def _parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def broken_links(site: Path):
    """``(problems, checked)``: the broken links and external resources, and the number of
    internal links checked."""
    broken, checked = [], 0
    parsed: dict[Path, Page] = {}

    def parse(path):
        if path not in parsed:
            parsed[path] = _parse(path)
        return parsed[path]

    for page in sorted(site.rglob("*.html")):
        if page.relative_to(site).parts[0] in ("_static", "_sources"):
            continue  # files a theme ships (Jinja templates among them), not pages of the site
        links = parse(page.resolve())
        where = page.relative_to(site)
        broken += [f"{where}: external {res}" for res in links.external]
        for target in links.targets:
            parts = urlsplit(target)
            if parts.scheme or parts.netloc:
                continue  # another site, mailto:, data:, javascript:
            if not parts.path and not parts.fragment:
                continue  # a query on the page itself, or "#"
            path = (page.parent / unquote(parts.path)).resolve() if parts.path else page.resolve()
            checked += 1
            if not path.exists():
                broken.append(f"{where}: {target}")
            elif (
                parts.fragment
                and path.suffix == ".html"
                and unquote(parts.fragment) not in parse(path).names
            ):
                broken.append(f"{where}: {target} (no such anchor)")
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
