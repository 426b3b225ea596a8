"""The one refusal of control characters on their way into a protocol's command line.

A URL's parts are percent-decoded before they become FTP, gopher, NNTP, SMTP or HTTP
command arguments; a decoded CR or LF would end the line early and start a command the
URL's author chose (RFC 1738 section 6). Every driver and protocol module refuses them
here, before a byte is sent, with one wording.
"""

from __future__ import annotations

from ..errors import UnsafeURL

__all__ = ["LINE_BREAKS", "control_names", "refuse_controls"]

#: what ends or cuts a command line: refused in every decoded argument
LINE_BREAKS = "\r\n\0"
_NAMES = {"\r": "CR", "\n": "LF", "\0": "NUL", "\t": "TAB"}


def control_names(value: str | None, chars: str = LINE_BREAKS) -> list[str]:
    """The names ("CR", "LF", "NUL", "TAB") of the *chars* found in *value*, in that order."""
    if not value:
        return []
    return [_NAMES.get(c, repr(c)) for c in "\r\n\0\t" + "".join(c for c in chars if c not in _NAMES)
            if c in chars and c in value]


def refuse_controls(url: object, what: str, value: str | None, chars: str = LINE_BREAKS, *,
                    decoded: bool = True, why: str = "") -> None:
    """Raise UnsafeURL if *value* holds any of *chars*; *what* names the part ("the file name")."""
    if value is None or not any(c in value for c in chars):  # the usual case: one scan per char
        return
    names = ", ".join(control_names(value, chars))
    after = " after decoding" if decoded else ""
    raise UnsafeURL(f"{what} contains {names}{after}; refusing to send it{why}", url=url)
