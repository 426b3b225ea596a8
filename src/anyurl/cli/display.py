"""Text from peers made safe for a terminal: what the CLI shows, never what it saves.

A server's menu titles, file names, reply lines and text bodies can carry ESC, CSI,
OSC, CR or backspace: on a terminal they move the cursor, retitle the window, hide
lines or answer back. Everything here shows C0 controls, DEL and C1 controls as
visible escapes (``\\x1b``) instead. Data written with ``-o -`` or to a file or a pipe
never passes through here.
"""

from __future__ import annotations

import codecs
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

__all__ = ["TerminalText", "json_safe", "printable", "safe_formatter"]


def printable(text: object) -> str:
    """*text* with every non-printable character (controls, format characters) escaped."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in s)


# json escapes only U+0000-U+001F; DEL and the C1 block (U+0080-U+009F, where CSI is U+009B) too
_JSON_MORE = {c: f"\\u{c:04x}" for c in (0x7F, *range(0x80, 0xA0))}


def json_safe(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with DEL and C1 controls escaped as ``\\u00XX`` too:
    the same JSON values, nothing a terminal acts on."""
    return text.translate(_JSON_MORE)


def safe_formatter(fmt: str) -> logging.Formatter:
    """A formatter whose lines (``-v``: replies a server sent) show their controls escaped
    (logging is loaded only by -v)."""
    import logging

    class SafeFormatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return "\n".join(printable(line) for line in super().format(record).split("\n"))

    return SafeFormatter(fmt)


class TerminalText:
    """A body shown on a terminal (``anyurl get URL`` with no ``-o``): UTF-8 text, TAB and
    line ends pass; other C0 controls, a CR not followed by LF, DEL, C1 controls and bytes
    that are not UTF-8 are shown as ``\\xNN``. Fed chunk by chunk (a split character or
    CRLF is held back until the next chunk)."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
        self._cr = False  # a CR ended the last chunk

    def feed(self, data: bytes, final: bool = False) -> bytes:
        """The bytes to write for *data* (with *final*, also what was held back)."""
        text = self._decoder.decode(data, final)
        if self._cr:
            text = "\r" + text
            self._cr = False
        if text.endswith("\r") and not final:
            text = text[:-1]
            self._cr = True
        return _UNSAFE.sub(_shown, text).encode("utf-8", "surrogateescape")


# controls but TAB and LF, a CR not before LF, DEL, C1, and the bytes surrogateescape kept
_UNSAFE = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\udc80-\udcff]|\r(?!\n)")


def _shown(m: re.Match[str]) -> str:
    c = m.group()
    if c >= "\udc80":  # a byte that is not UTF-8
        return f"\\x{ord(c) - 0xDC00:02x}"
    return repr(c)[1:-1]
