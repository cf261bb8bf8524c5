"""Text bound for a terminal: non-printable characters escaped, so that strings from a spec
or a plugin (``ESC[2J`` clears the screen, ``ESC]0;...BEL`` retitles the window) print as
visible escapes instead of acting on the terminal."""

from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text, keep: str = "") -> str:
    """``str(text)`` with every non-printable character escaped as Python writes it.

    Parameters
    ----------
    text : object
        Converted with ``str``.
    keep : str, default ""
        Characters to leave as they are (``"\\n"`` for a message of several lines).

    Returns
    -------
    str
        Printable characters (``str.isprintable``: letters of any script, digits, punctuation,
        the ASCII space) unchanged; the others, such as ESC, BEL, the C1 controls and the
        bidirectional overrides, written ``\\x1b``, ``\\x07``, ``\\x9b``, ``\\u202e``.

    Examples
    --------
    >>> printable("a\\x1b[2Jb")
    'a\\\\x1b[2Jb'
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _escape(c) for c in text)


def printable_json(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with its non-printable characters
    written as ``\\uXXXX`` escapes; the newlines and spaces of the layout stay.

    ``json.dumps`` escapes the controls below U+0020 only; DEL, the C1 controls (U+009B is
    a CSI) and the format characters (U+202E) pass through. Outside strings JSON holds only
    printable characters and layout whitespace, so every escape written lands in a string,
    where it decodes to the same character.
    """
    if text.isprintable():
        return text
    out = []
    for c in text:
        if c.isprintable() or c == "\n":
            out.append(c)
        elif ord(c) < 0x10000:
            out.append(f"\\u{ord(c):04x}")
        else:  # a surrogate pair, as JSON writes characters beyond the BMP
            code = ord(c) - 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
    return "".join(out)


class PrintableStream:
    """A text stream that writes through :func:`printable` (newlines kept)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        return self._stream.write(printable(text, keep="\n"))

    def flush(self):
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)
