"""URL values, one frozen class per scheme, and the RFC 1738 parser (pure, no I/O).

``parse(text)`` reads RFC 1738 sections 2, 3 and 5 (the BNF is authoritative)
for ftp, http, gopher, mailto, news, nntp, telnet, wais, file and prospero,
plus https, ftps and nntps, and returns the value class of the scheme;
unknown schemes give a :class:`GenericURL`. ``str(url)`` is the canonical
text, which parses back to an equal value. Bad input raises
:class:`~anyurl.errors.URLSyntaxError` naming the position and the BNF rule.

Two modes:

* ``strict=True`` is the section 5 BNF, plus three schemes beyond it (https,
  ftps, nntps) and IPv6 literals (``[::1]``).
* ``strict=False`` (the default) also accepts what users write in practice:
  user:password in http(s) (basic auth), a ``#fragment`` after an http(s)
  URL (kept in ``HTTPURL.fragment``, which is not part of the value), a
  search part without a path (``http://h?q``), ``/`` and ``?`` inside a
  search part, the "national" characters ``~ { } | ^ [ ] `` ` unencoded in
  paths, printable non-ASCII characters in paths (sent as UTF-8), ``_`` in
  host names and a trailing ``.`` on a host, ``;`` inside ftp/file path
  segments, an empty nntp group, ``file:/path``, and a missing ``/`` before
  an empty path in schemes whose BNF wants one.

Neither mode ever accepts: spaces, control characters (also leading or
trailing), backslashes, ``<``, ``>``, ``"``, bad ``%XX`` escapes, ``%`` in a
host, an empty host where the scheme needs one, a port outside 1..65535,
all-numeric hosts that are not dotted quads (``http://2130706433/``), IPv4
parts with leading zeros (octal confusion), and an ``@`` following a ``?``
or ``#`` before the first ``/`` (``http://abc#@def``: RFC 1738 readers take
``def`` as the host, others ``abc``).

``str()`` encodes exactly the characters the BNF does not allow unencoded
in each component, so a lenient ``ftp://h/~u`` is written ``ftp://h/%7Eu``;
http(s) ``path``/``search`` and generic schemeparts are kept as written
(non-ASCII %-encoded). ``url.join(ref)`` resolves relative references for
ftp, http(s) and file; other schemes are not hierarchical and refuse.
``extract_urls(text)`` finds URLs in free text (the RFC's appendix).

Decoded components are ``str``. Escaped octets that are not UTF-8 decode with
``surrogateescape`` so :func:`to_wire` gives back the exact octets.

``parse`` and ``extract_urls`` take time linear in the length of the text
(tests/unit hold them to 1 s of CPU for 10 MB of hostile text).
"""

from __future__ import annotations

import codecs
import functools
import re
from collections.abc import Callable
from operator import attrgetter

from ._record import DataclassFields, frozen_error
from .errors import URLSyntaxError
from .schemes import DEFAULT_PORTS, SCHEMES

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    from dataclasses import Field
    from typing import Any, ClassVar

__all__ = [
    "DEFAULT_PORTS",
    "FPATH",
    "FTPURL",
    "HTTPURL",
    "NNTPURL",
    "URL",
    "WAISURL",
    "FileURL",
    "GenericURL",
    "GopherURL",
    "MailtoURL",
    "NewsURL",
    "ProsperoURL",
    "Resolver",
    "ServerURL",
    "TelnetURL",
    "extract_urls",
    "join_text",
    "leaf_name",
    "parse",
    "percent_decode",
    "percent_encode",
    "scheme_hint",
    "slash_free_name",
    "to_wire",
    "tree_place",
]



class _Lazy:
    """A regular expression compiled on first use.

    Compiling every pattern of this module at import cost ~27 ms of start-up,
    and most programs use a few schemes only.
    """

    __slots__ = ("_flags", "_pattern", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._pattern: re.Pattern[str] | None = None

    def __call__(self) -> re.Pattern[str]:
        pattern = self._pattern
        if pattern is None:
            pattern = self._pattern = re.compile(self._source, self._flags)
        return pattern


# --------------------------------------------------------------------------
# Percent-encoding helpers (section 2.2)
# --------------------------------------------------------------------------

_ESC_RUN = _Lazy(r"(?:%[0-9A-Fa-f]{2})+")
_BAD_ESCAPE = _Lazy(r"%(?![0-9A-Fa-f]{2})")
_MANY = 512  # above this length, work in C for the whole text rather than a Python call per run


def _decode_run(m: re.Match[str]) -> str:
    # A whole run at once so multi-octet UTF-8 sequences decode together.
    return bytes.fromhex(m.group().replace("%", "")).decode("utf-8", "surrogateescape")


def percent_decode(s: str) -> str:
    """Decode ``%XX`` escapes; octets that are not UTF-8 become lone surrogates (surrogateescape)."""
    if "%" not in s:
        return s
    if len(s) > _MANY and "\\" not in s and _BAD_ESCAPE().search(s) is None:
        # One C call instead of one Python call per run of escapes (a long text of
        # "%41a%41a..." took seconds). No backslash, so "\\xNN" is the only escape
        # escape_decode sees. Decoding all octets at once gives the same text as run by
        # run: a literal character never starts with a UTF-8 continuation octet.
        try:
            raw = s.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: keep them as they are, run by run
            pass
        else:
            octets: bytes = codecs.escape_decode(raw.replace(b"%", b"\\x"))[0]
            return octets.decode("utf-8", "surrogateescape")
    return _ESC_RUN().sub(_decode_run, s)


def _encode_run(m: re.Match[str]) -> str:
    return "".join([f"%{b:02X}" for b in m.group().encode("utf-8", "surrogateescape")])


def _encode_char(ch: str) -> str:
    return "%" + ch.encode("utf-8", "surrogateescape").hex("%").upper()


@functools.lru_cache(maxsize=64)
def _needs_encoding(safe: str) -> re.Pattern[str]:
    return re.compile("[^A-Za-z0-9" + re.escape(safe) + "]+")


def percent_encode(s: str, safe: str = "") -> str:
    """Encode every character of *s* except ASCII letters, digits and those in *safe*.

    Characters are encoded as their UTF-8 octets; lone surrogates from
    :func:`percent_decode` go back to the octet they came from.
    """
    pat = _needs_encoding(safe)
    if pat.search(s) is None:
        return s
    if len(s) > _MANY:
        # A table of the distinct characters to encode, applied by str.translate (C),
        # so the cost does not grow with the number of runs.
        table = {ord(ch): _encode_char(ch) for ch in set(s) if pat.match(ch)}
        return s.translate(table)
    return pat.sub(_encode_run, s)


def to_wire(s: str) -> bytes:
    """The octets a decoded component stands for (UTF-8, surrogateescape)."""
    return s.encode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------
# Character classes of the BNF (section 5)
# --------------------------------------------------------------------------

_UNRESERVED = "A-Za-z0-9$\\-_.+!*'(),"          # alpha | digit | safe | extra, as a regex class body
_UNRESERVED_CHARS = "$-_.+!*'(),"               # the same, for percent_encode (letters/digits implied)
_NON_ASCII_RANGE = "\u0080-\U0010ffff"
_LENIENT = "~{}|^\\[\\]`" + _NON_ASCII_RANGE       # national characters (but "\") and non-ASCII


class _Rule:
    """A component's allowed characters: classes for the first bad one (compiled on first use), and
    the encoder's safe set."""

    __slots__ = ("_bad", "_strict", "_lenient_extra", "name", "safe")

    def __init__(self, name: str, strict: str, lenient_extra: str, safe: str) -> None:
        self.name = name
        self._strict = strict
        self._lenient_extra = lenient_extra
        self._bad: tuple[re.Pattern[str], re.Pattern[str]] | None = None
        self.safe = _UNRESERVED_CHARS + safe

    def ok_class(self, strict: bool) -> str:
        """A regex class of the characters allowed in *strict* or lenient mode."""
        if strict:
            return f"[{_UNRESERVED}{self._strict}%]"
        extra = self._lenient_extra
        if _NON_ASCII_RANGE in extra:
            # every non-ASCII character is allowed, so the bad ones are ASCII: a small
            # class of those matches the same and compiles ~50x faster than the negated range
            ascii_ok = re.compile(f"[{_UNRESERVED}{self._strict}{extra.replace(_NON_ASCII_RANGE, '')}%]")
            return "[^" + "".join(re.escape(chr(c)) for c in range(128) if not ascii_ok.match(chr(c))) + "]"
        return f"[{_UNRESERVED}{self._strict}{extra}%]"

    def bad(self, strict: bool) -> re.Pattern[str]:
        """A pattern finding the first character not allowed."""
        pair = self._bad
        if pair is None:
            pair = self._bad = (re.compile(_negate(self.ok_class(False))),
                                re.compile(_negate(self.ok_class(True))))
        return pair[strict]


def _negate(char_class: str) -> str:
    return "[" + char_class[2:] if char_class.startswith("[^") else "[^" + char_class[1:]


_USER = _Rule("user", ";?&=", "", ";?&=")
_HTTP_USER = _Rule("user", ";?&=", "", ";&=")        # "?" encoded: it would end an http authority
FPATH = _Rule("fpath", "?:@&=/", ";" + _LENIENT, "?:@&=")
_HPATH = _Rule("hpath", ";:@&=/", _LENIENT, ";:@&=/")
_SEARCH = _Rule("search", ";:@&=", "/?" + _LENIENT, ";:@&=")
_FRAGMENT = _Rule("fragment", ";/?:@&=", "#" + _LENIENT, ";/?:@&=")
_XCHAR = _Rule("xchar", ";/?:@&=", _LENIENT, ";/?:@&=")
_GENERIC = _Rule("schemepart", ";/?:@&=", "#" + _LENIENT, ";/?:@&=")
_MAILTO = _Rule("encoded822addr", ";/:@&=", _LENIENT, ";/:@&=")
_HNAME = _Rule("hfname", ";/:@?", _LENIENT, ";/:@?")
_HVALUE = _Rule("hfvalue", ";/:@?=", _LENIENT, ";/:@?=")
_ARTICLE = _Rule("article", ";/?:&=", _LENIENT, ";/?:&=")
_UCHAR = _Rule("uchar", "", _LENIENT, "")
_WPATH = _Rule("wpath", "", "/;:@&=?" + _LENIENT, "")
_PPATH = _Rule("ppath", "?:@&=/", _LENIENT, "?:@&=/")
_FIELD = _Rule("fieldspec", "?:@&", "=" + _LENIENT, "?:@&")

_SCHEME = _Lazy(r"([A-Za-z0-9+.\-]+):")
_DIGITS = _Lazy(r"[0-9]+")
_LABEL = "[A-Za-z0-9]+(?:-+[A-Za-z0-9]+)*"
_TOPLABEL = "[A-Za-z][A-Za-z0-9]*(?:-+[A-Za-z0-9]+)*"
_HOSTNAME_STRICT = _Lazy(f"(?:{_LABEL}\\.)*{_TOPLABEL}")
_HOSTNAME_LENIENT = _Lazy(
    f"(?:{_LABEL.replace('A-Za-z0-9', 'A-Za-z0-9_')}\\.)*"
    f"{_TOPLABEL.replace('A-Za-z0-9', 'A-Za-z0-9_')}\\.?"
)
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = _Lazy(f"(?:{_OCTET}\\.){{3}}{_OCTET}")
_HOST_BAD_CHAR = _Lazy(r"[^A-Za-z0-9.\-_]")
_GROUP_STRICT = _Lazy(r"[A-Za-z][A-Za-z0-9\-.+_]*")
_GROUP_LENIENT = _Lazy(r"[A-Za-z0-9][A-Za-z0-9\-.+_]*")
_FTP_TYPE = _Lazy(r";type=([^/;]*)\Z", re.IGNORECASE)
_HTTP_AUTH_STOP = _Lazy(r"[?#]")
_NON_ASCII = _Lazy(r"[^\x00-\x7f]")


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------

def _describe(ch: str) -> str:
    if ch == " ":
        return "unencoded space"
    if ch in "\t\r\n" or ord(ch) < 0x20 or ord(ch) == 0x7F:
        return f"control character U+{ord(ch):04X} (must be %-encoded)"
    if ch == "\\":
        return "backslash"
    if ch == "#":
        return "unencoded '#' (a fragment is not part of the URL; encode it as %23)"
    if ord(ch) > 0x7F:
        return f"non-ASCII character {ch!r} (strict mode: encode it as UTF-8 %XX)"
    return f"character {ch!r} is not allowed here (encode it as %{ord(ch):02X})"


def _error(text: str, pos: int, message: str, rule: str) -> URLSyntaxError:
    return URLSyntaxError(message, url=text, position=pos, rule=rule)


def _check(text: str, start: int, comp: str, rule: _Rule, strict: bool) -> None:
    """Raise if *comp* (which starts at *start* in *text*) has a character *rule* does not allow."""
    m = rule.bad(strict).search(comp)
    if m is not None:
        raise _error(text, start + m.start(), _describe(m.group()), rule.name)


def _scheme_error(text: str) -> URLSyntaxError:
    if not text:
        return _error(text, 0, "empty URL", "url")
    if text[0] <= " " or text[0] == "\x7f":
        return _error(text, 0, "leading whitespace or control character", "url")
    m = re.match(r"[A-Za-z0-9+.\-]*", text)
    end = m.end() if m else 0
    if end == 0:
        return _error(text, 0, "missing scheme: a URL starts with <scheme>:", "scheme")
    if end == len(text):
        return _error(text, end, "missing ':' after the scheme" + scheme_hint(text), "scheme")
    return _error(text, end, f"expected ':' after the scheme name, found {text[end]!r}" + scheme_hint(text),
                  "scheme")


# host[:port][/path]: what curl and wget users type without a scheme ("127.0.0.1:8080/x.html",
# "example.org/x", "localhost:8080"); a bare name only with a port ("host:21"), as "name:rest"
# is a URL of scheme "name" for every other rest
_SCHEMELESS = _Lazy(r"(?:(?:localhost|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*"
                    r"[A-Za-z0-9])?)+\.?)(?::[0-9]{1,5})?|[A-Za-z0-9][A-Za-z0-9-]*:[0-9]{1,5})(?:[/?#].*)?", re.S)


def scheme_hint(text: str) -> str:
    """For *text* written without its scheme (host[:port][/path]), the words that say what to
    write: " (a URL starts with its scheme: did you mean http://127.0.0.1:8080/x.html?)";
    else "". anyurl does not guess a scheme as curl does: ``localhost:8080`` could as well
    be a URL of the scheme "localhost". Hosts named ftp.* and gopher.* are given their scheme."""
    if len(text) > 2048 or not _SCHEMELESS().fullmatch(text):
        return ""
    host = text.lower()
    scheme = "ftp" if host.startswith("ftp.") else "gopher" if host.startswith("gopher.") else "http"
    return f" (a URL starts with its scheme: did you mean {scheme}://{text}?)"


_ASCII_CONTROLS = dict.fromkeys([*range(0x20), 0x7F], "a")


def _check_unicode(text: str, strict: bool) -> None:
    """Refuse non-ASCII text in strict mode, and non-printable non-ASCII characters in any mode."""
    if strict:
        m = _NON_ASCII().search(text)
        if m is not None:
            raise _error(text, m.start(), _describe(m.group()), "uchar")
        return
    if text.isprintable():
        return
    # ASCII control characters are refused later, by each component's rule. Tested
    # in C a block at a time; only the block with the culprit is looked at in Python.
    for start in range(0, len(text), 4096):
        block = text[start:start + 4096]
        if block.isprintable() or block.translate(_ASCII_CONTROLS).isprintable():
            continue
        for k, ch in enumerate(block):
            if ch > "\x7f" and not ch.isprintable():
                raise _error(text, start + k, f"non-printable character U+{ord(ch):04X}", "uchar")


# --------------------------------------------------------------------------
# Value classes
# --------------------------------------------------------------------------

def _ip_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


class URL:
    """Base of every URL value. ``scheme`` is lower case.

    Values are immutable (assignment raises ``dataclasses.FrozenInstanceError``,
    an ``AttributeError``), compare and hash by their fields (same class
    only), pickle and copy. The fields are the parameters of ``__init__``.
    """

    scheme: str

    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    else:
        # plain classes, not dataclasses (13 of them cost ~18 ms of start-up); dataclasses.fields(),
        # replace(), asdict() and is_dataclass() still work through this, made on first use
        __dataclass_fields__ = DataclassFields()
    _field_names: ClassVar[tuple[str, ...]]
    _not_compared: ClassVar[tuple[str, ...]] = ()
    _fields_init: ClassVar[Callable[..., None]]  # for DataclassFields: the fields are its parameters
    _factories: ClassVar[dict[str, Callable[[], object]]] = {}
    _frozen: ClassVar[bool] = True
    __match_args__: ClassVar[tuple[str, ...]]
    _key: ClassVar[attrgetter[object]]  # the compared fields (not a descriptor: no self bound)
    _dataclass_fields: ClassVar[dict[str, Field[Any]]]

    def __init__(self, scheme: str) -> None:
        self.__dict__["scheme"] = scheme

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        _value_class(cls)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._key(self) == self._key(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key(self))

    if not TYPE_CHECKING:  # hidden from mypy, which would then allow assigning any attribute
        def __setattr__(self, name: str, value: object) -> None:
            raise frozen_error(f"cannot assign to field {name!r}")

        def __delattr__(self, name: str) -> None:
            raise frozen_error(f"cannot delete field {name!r}")

    def __replace__(self, **changes: Any) -> URL:
        """``copy.replace(url, field=value)`` (Python 3.13): a new value with *changes*."""
        return type(self)(**{**{n: getattr(self, n) for n in self._field_names}, **changes})

    def masked(self) -> str:
        """The canonical text with any password replaced by ``****``."""
        return str(self)

    def __repr__(self) -> str:
        parts = []
        for name in self._field_names:
            value = getattr(self, name)
            if name == "password" and value is not None:
                value = "****"
            parts.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def join(self, ref: str) -> URL:
        """Resolve the relative reference *ref* against this URL (ftp, http(s) and file only)."""
        raise URLSyntaxError(f"{self.scheme} URLs are not hierarchical: cannot resolve {ref!r}",
                             url=self.masked(), rule="hierarchical")


def _value_class(cls: type[URL]) -> None:
    code = cls.__init__.__code__
    names = code.co_varnames[1:code.co_argcount]
    cls._field_names = names
    cls._fields_init = cls.__init__
    cls.__match_args__ = names  # type: ignore[misc]  # as a dataclass has (mypy guards it for its own)
    cls._key = attrgetter(*(n for n in names if n not in cls._not_compared))


_value_class(URL)


class GenericURL(URL):
    """``scheme:schemepart`` for a scheme RFC 1738 does not define; ``schemepart`` is kept as written."""

    schemepart: str

    def __init__(self, scheme: str, schemepart: str = "") -> None:
        self.__dict__.update(scheme=scheme, schemepart=schemepart)

    def __str__(self) -> str:
        return f"{self.scheme}:{percent_encode(self.schemepart, _GENERIC.safe + '%#' + _LENIENT_SAFE)}"


class ServerURL(URL):
    """A URL of the common Internet scheme syntax (section 3.1).

    ``host`` is lower case; an IPv6 literal is stored without its brackets,
    in compressed form (``http://[::1]/`` has host ``"::1"``), and written
    back with them.
    ``port`` is the scheme's default when the URL has none. ``user`` and
    ``password`` are decoded; ``None`` means absent, ``""`` present but empty.
    """

    host: str
    port: int
    user: str | None
    password: str | None

    def __init__(self, scheme: str, host: str = "", port: int = 0, user: str | None = None,
                 password: str | None = None) -> None:
        self.__dict__.update(scheme=scheme, host=host, port=port, user=user, password=password)

    _user_rule = _USER

    @property
    def hostport(self) -> str:
        """``host`` (bracketed if IPv6) and ``:port`` when the port is not the default."""
        if self.port == DEFAULT_PORTS.get(self.scheme):
            return _ip_host(self.host)
        return f"{_ip_host(self.host)}:{self.port}"

    def _login(self, mask: bool = False) -> str:
        if self.user is None:
            return self.hostport
        safe = self._user_rule.safe
        login = percent_encode(self.user, safe)
        if self.password is not None:
            login += ":" + ("****" if mask else percent_encode(self.password, safe))
        return f"{login}@{self.hostport}"

    def _path(self) -> str:
        return ""

    def __str__(self) -> str:
        return f"{self.scheme}://{self._login()}{self._path()}"

    def masked(self) -> str:
        return f"{self.scheme}://{self._login(True)}{self._path()}"


def join_text(base: str, ref: str) -> str:
    """RFC 1808-style resolution on encoded text (dot segments removed as RFC 3986 does)."""
    m = re.match(r"([A-Za-z0-9+.\-]+:)?(//[^/?#]*)?([^?#]*)(\?[^#]*)?(#.*)?\Z", base, re.S)
    assert m is not None
    b_scheme, b_auth, b_path, b_query = m.group(1) or "", m.group(2) or "", m.group(3), m.group(4) or ""
    if ref == "":
        return base
    m_scheme = _SCHEME().match(ref)
    if m_scheme:
        rest = ref[m_scheme.end():]
        if m_scheme.group(1).lower() + ":" != b_scheme.lower() or rest.startswith("//"):
            return ref                  # absolute (write "./a:b" for a relative path with a colon)
        ref = rest                      # "http:g" on an http base: relative (RFC 3986 5.2.2, non-strict)
        if ref == "":
            return base
    if ref.startswith("//"):
        return b_scheme + ref
    r = re.match(r"([^?#]*)(\?[^#]*)?(#.*)?\Z", ref, re.S)
    assert r is not None
    r_path, r_query, r_frag = r.group(1), r.group(2), r.group(3) or ""
    if not r_path:
        return b_scheme + b_auth + b_path + (r_query if r_query is not None else b_query) + r_frag
    if r_path.startswith("/"):
        path = r_path
    else:
        path = b_path[: b_path.rfind("/") + 1] + r_path if "/" in b_path else "/" + r_path
    return b_scheme + b_auth + _remove_dots(path) + (r_query or "") + r_frag


def _remove_dots(path: str) -> str:
    out: list[str] = []
    segs = path.split("/")
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        if seg == ".":
            if last:
                out.append("")
        elif seg == "..":
            if len(out) > 1:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(seg)
    result = "/".join(out)
    return result if result.startswith("/") else "/" + result


# A relative reference the fast path of Resolver takes: a path of characters every http path
# keeps as they are (no scheme, no ":", valid escapes only), an optional query, a fragment.
_SIMPLE_REF = re.compile(r"((?:[A-Za-z0-9\-._~!$&'()*+,;=@/]|%[0-9A-Fa-f]{2})*)"
                         r"(\?(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?(?:#.*)?\Z", re.S)


class Resolver:
    """References resolved against one base URL (a page's links): ``join(ref)`` gives the
    resolved URL's text and value, the same as ``parse(join_text(str(base), ref))`` and its
    ``str()``. The common relative forms against an http(s) base ("p.html", "../d/",
    "/img/a.png", "?q=1") are joined as text and the value built without a parse; anything
    else takes that strict path."""

    __slots__ = ("base", "base_text", "_dir", "_host", "_origin", "_path", "_port", "_query", "_scheme")

    def __init__(self, base: URL) -> None:
        self.base = base
        self.base_text = text = str(base)
        self._origin: str | None = None
        if isinstance(base, HTTPURL) and base.user is None:
            origin = f"{base.scheme}://{base.hostport}"
            if text.startswith(origin + "/"):
                path, q, query = text[len(origin):].partition("?")
                self._origin, self._path, self._query = origin, path, q + query
                self._dir = path[: path.rfind("/") + 1]
                self._scheme, self._host, self._port = base.scheme, base.host, base.port

    def join(self, ref: str) -> tuple[str, URL]:
        """(text, value) of *ref* resolved; raises URLSyntaxError as parse does."""
        origin = self._origin
        if origin is not None and not ref.startswith("//"):
            m = _SIMPLE_REF.match(ref)
            if m is not None:
                path, query = m.group(1), m.group(2)
                if not path:
                    path = self._path
                    if query is None:
                        query = self._query
                elif path[0] != "/":
                    path = self._dir + path
                if "/." in path:
                    path = _remove_dots(path)
                url = _new(HTTPURL)
                url.__dict__.update(scheme=self._scheme, host=self._host, port=self._port, user=None,
                                    password=None, path=path[1:], search=query[1:] if query else None,
                                    fragment=None)
                return origin + path + (query or ""), url
        u = parse(join_text(self.base_text, ref) if isinstance(self.base, (HTTPURL, FTPURL, FileURL)) else ref)
        return str(u), u


class _Hierarchical:
    """Mixin: ``join`` for schemes whose path is a "/" hierarchy (section 2.3)."""

    def join(self, ref: str) -> URL:
        """Resolve *ref* (RFC 1808 style, on the encoded path) and parse the result."""
        return parse(join_text(str(self), ref))


class FTPURL(_Hierarchical, ServerURL):
    """``ftp://user:password@host:port/cwd1/.../cwdN/name;type=X`` (section 3.2).

    ``cwd`` are the decoded directory segments (each one CWD), ``name`` the
    decoded last segment, ``typecode`` ``"a"``, ``"i"``, ``"d"`` or ``None``.
    """

    cwd: tuple[str, ...]
    name: str
    typecode: str | None

    def __init__(self, scheme: str, host: str = "", port: int = 0, user: str | None = None,
                 password: str | None = None, cwd: tuple[str, ...] = (), name: str = "",
                 typecode: str | None = None) -> None:
        self.__dict__.update(scheme=scheme, host=host, port=port, user=user, password=password,
                             cwd=cwd, name=name, typecode=typecode)

    def _path(self) -> str:
        safe = FPATH.safe
        path = "/".join([percent_encode(s, safe) for s in (*self.cwd, self.name)])
        if self.typecode is not None:
            path += ";type=" + self.typecode
        return "/" + path


class HTTPURL(_Hierarchical, ServerURL):
    """``http://host:port/path?search`` (section 3.3), also https.

    ``path`` and ``search`` are as written (still encoded; non-ASCII
    characters are %-encoded). ``path`` has no leading "/" and is ``""``
    when absent; ``search`` is ``None`` when there is no "?". ``fragment``
    holds a lenient ``#...`` suffix; it is not part of the URL, so it takes
    no part in equality or in ``str()``.
    """

    path: str
    search: str | None
    fragment: str | None

    _not_compared = ("fragment",)

    def __init__(self, scheme: str, host: str = "", port: int = 0, user: str | None = None,
                 password: str | None = None, path: str = "", search: str | None = None,
                 fragment: str | None = None) -> None:
        self.__dict__.update(scheme=scheme, host=host, port=port, user=user, password=password,
                             path=path, search=search, fragment=fragment)

    _user_rule = _HTTP_USER

    def _path(self) -> str:
        text = "/" + percent_encode(self.path, _HPATH.safe + "%" + _LENIENT_SAFE)
        if self.search is not None:
            text += "?" + percent_encode(self.search, _SEARCH.safe + "%/?" + _LENIENT_SAFE)
        return text


_LENIENT_SAFE = "~{}|^[]`"


class GopherURL(ServerURL):
    """``gopher://host:port/<gophertype><selector>%09<search>%09<gopher+_string>`` (section 3.4).

    All decoded. ``gophertype`` is ``"1"`` when the path is empty; ``search``
    and ``gopher_plus`` are ``None`` when absent. A selector or search cannot
    contain a TAB (it is the separator); CR/LF are kept for the handler to refuse.
    """

    gophertype: str
    selector: str
    search: str | None
    gopher_plus: str | None

    def __init__(self, scheme: str, host: str = "", port: int = 0, user: str | None = None,
                 password: str | None = None, gophertype: str = "1", selector: str = "",
                 search: str | None = None, gopher_plus: str | None = None) -> None:
        self.__dict__.update(scheme=scheme, host=host, port=port, user=user, password=password,
                             gophertype=gophertype, selector=selector, search=search, gopher_plus=gopher_plus)

    def _path(self) -> str:
        if self.gophertype == "1" and not self.selector and self.search is None and self.gopher_plus is None:
            return "/"
        safe = _XCHAR.safe
        text = "/" + percent_encode(self.gophertype + self.selector, safe)
        if self.search is not None or self.gopher_plus is not None:
            text += "%09" + percent_encode(self.search or "", safe)
        if self.gopher_plus is not None:
            text += "%09" + percent_encode(self.gopher_plus, safe)
        return text


class MailtoURL(URL):
    """``mailto:<addr>`` (section 3.5) with RFC 6068 ``?name=value&...`` headers, all decoded.

    ``address`` is the whole decoded to-part (it may hold several
    comma-separated addresses); see :attr:`addresses`.
    """

    address: str
    headers: tuple[tuple[str, str], ...]

    def __init__(self, scheme: str, address: str = "", headers: tuple[tuple[str, str], ...] = ()) -> None:
        self.__dict__.update(scheme=scheme, address=address, headers=headers)

    @property
    def addresses(self) -> tuple[str, ...]:
        """Every recipient: the comma-separated to-part, then any ``to=`` header values."""
        found = [a.strip() for a in self.address.split(",")]
        for name, value in self.headers:
            if name.lower() == "to":
                found.extend(a.strip() for a in value.split(","))
        return tuple(a for a in found if a)

    def __str__(self) -> str:
        text = "mailto:" + percent_encode(self.address, _MAILTO.safe)
        if self.headers:
            text += "?" + "&".join(
                percent_encode(n, _HNAME.safe) + "=" + percent_encode(v, _HVALUE.safe)
                for n, v in self.headers
            )
        return text


class NewsURL(URL):
    """``news:<group>``, ``news:<message-id>`` or ``news:*`` (section 3.6).

    ``message_id`` is decoded and has no angle brackets; exactly one of
    ``group`` and ``message_id`` is set (``news:*`` has group ``"*"``).
    """

    group: str | None
    message_id: str | None

    def __init__(self, scheme: str, group: str | None = None, message_id: str | None = None) -> None:
        self.__dict__.update(scheme=scheme, group=group, message_id=message_id)

    def __str__(self) -> str:
        if self.message_id is not None:
            left, _, right = self.message_id.rpartition("@")
            # The domain part is never decoded (it may hold a "[literal]"), only the local part.
            return f"news:{percent_encode(left, _ARTICLE.safe)}@{percent_encode(right, _ARTICLE.safe + '[]')}"
        return f"news:{self.group}"


class NNTPURL(ServerURL):
    """``nntp://host:port/group/article`` (section 3.7), also nntps; ``article`` is an int or None."""

    group: str
    article: int | None

    def __init__(self, scheme: str, host: str = "", port: int = 0, user: str | None = None,
                 password: str | None = None, group: str = "", article: int | None = None) -> None:
        self.__dict__.update(scheme=scheme, host=host, port=port, user=user, password=password,
                             group=group, article=article)

    def _path(self) -> str:
        return f"/{self.group}" + (f"/{self.article}" if self.article is not None else "")


class TelnetURL(ServerURL):
    """``telnet://user:password@host:port/`` (section 3.8)."""

    def _path(self) -> str:
        return "/"


class WAISURL(ServerURL):
    """``wais://host:port/database[?search | /wtype/wpath]`` (section 3.9), all decoded.

    ``search`` and (``wtype``, ``wpath``) are exclusive; a value with both
    is written in the document form.
    """

    database: str
    search: str | None
    wtype: str | None
    wpath: str | None

    def __init__(self, scheme: str, host: str = "", port: int = 0, user: str | None = None,
                 password: str | None = None, database: str = "", search: str | None = None,
                 wtype: str | None = None, wpath: str | None = None) -> None:
        self.__dict__.update(scheme=scheme, host=host, port=port, user=user, password=password,
                             database=database, search=search, wtype=wtype, wpath=wpath)

    def _path(self) -> str:
        safe = _UCHAR.safe
        text = "/" + percent_encode(self.database, safe)
        if self.wtype is not None or self.wpath is not None:
            text += f"/{percent_encode(self.wtype or '', safe)}/{percent_encode(self.wpath or '', safe)}"
        elif self.search is not None:
            text += "?" + percent_encode(self.search, _SEARCH.safe)
        return text


class FileURL(_Hierarchical, URL):
    """``file://host/path`` (section 3.10).

    ``host`` is ``""``, ``"localhost"`` or a host name; ``path`` is decoded
    and has no leading "/" (``file:///etc/motd`` has path ``"etc/motd"``).
    """

    host: str
    path: str

    def __init__(self, scheme: str, host: str = "", path: str = "") -> None:
        self.__dict__.update(scheme=scheme, host=host, path=path)

    def __str__(self) -> str:
        return f"file://{_ip_host(self.host)}/{percent_encode(self.path, FPATH.safe + '/')}"


class ProsperoURL(ServerURL):
    """``prospero://host:port/hsoname;field=value...`` (section 3.11), all decoded."""

    hsoname: str
    fields: tuple[tuple[str, str], ...]

    def __init__(self, scheme: str, host: str = "", port: int = 0, user: str | None = None,
                 password: str | None = None, hsoname: str = "", fields: tuple[tuple[str, str], ...] = ()) -> None:
        self.__dict__.update(scheme=scheme, host=host, port=port, user=user, password=password,
                             hsoname=hsoname, fields=fields)

    def _path(self) -> str:
        safe = _FIELD.safe
        return "/" + percent_encode(self.hsoname, _PPATH.safe) + "".join(
            f";{percent_encode(n, safe)}={percent_encode(v, safe)}" for n, v in self.fields
        )


# --------------------------------------------------------------------------
# The parser
# --------------------------------------------------------------------------

_Authority = tuple[str | None, str | None, str, int, int]


def _host(text: str, start: int, end: int, strict: bool, scheme: str) -> str:
    raw = text[start:end]
    if not raw:
        raise _error(text, start, f"empty host: {scheme} URLs need one", "host")
    if len(raw) <= 253:
        if (_HOSTNAME_STRICT if strict else _HOSTNAME_LENIENT)().fullmatch(raw):
            return raw.lower()
        if _IPV4().fullmatch(raw):
            return raw
    bad = _HOST_BAD_CHAR().search(raw)
    if bad is not None:
        ch = bad.group()
        what = "percent sign (host names cannot be %-encoded)" if ch == "%" else _describe(ch)
        raise _error(text, start + bad.start(), f"{what} in host", "host")
    if len(raw) > 253:
        raise _error(text, start, "host name longer than 253 characters", "hostname")
    if re.fullmatch(r"[0-9.]+", raw):
        raise _error(text, start, "bad IPv4 address: four decimal numbers 0-255 without leading zeros",
                     "hostnumber")
    raise _error(text, start, "bad host name: dot-separated labels of letters, digits and inner "
                 "hyphens, the last one starting with a letter", "hostname")


def _authority(text: str, i: int, scheme: str, strict: bool, http: bool = False) -> _Authority:
    """Parse ``//[user[:password]@]host[:port]``; return (user, password, host, port, end)."""
    if not text.startswith("//", i):
        raise _error(text, i, f"'//' must follow '{scheme}:'", "ip-schemepart")
    start = i + 2
    end = text.find("/", start)
    if end < 0:
        end = len(text)
    if http:
        stop = _HTTP_AUTH_STOP().search(text, start, end)
        if stop is not None:
            cut = stop.start()
            at = text.find("@", cut, end)
            if at >= 0:
                raise _error(text, at, f"'@' after {text[cut]!r} in the authority: userinfo/host "
                             "ambiguity (encode it as %40, or put a '/' before the query)", "login")
            end = cut
    user = password = None
    hstart = start
    at = text.rfind("@", start, end)
    if at >= 0:
        colon = text.find(":", start, at)
        uend = colon if colon >= 0 else at
        raw = text[start:uend]
        _check(text, start, raw, _USER, strict)
        user = percent_decode(raw)
        if colon >= 0:
            raw = text[colon + 1:at]
            _check(text, colon + 1, raw, _USER, strict)
            password = percent_decode(raw)
        hstart = at + 1
    if text.startswith("[", hstart):
        close = text.find("]", hstart, end)
        if close < 0:
            raise _error(text, hstart, "unclosed '[' in host", "host")
        import ipaddress  # only for IPv6 literals: it costs start-up time

        try:
            host = str(ipaddress.IPv6Address(text[hstart + 1:close]))
        except ValueError:
            raise _error(text, hstart + 1, "bad IPv6 address literal", "host") from None
        pstart = close + 1
        if pstart < end and text[pstart] != ":":
            raise _error(text, pstart, f"{_describe(text[pstart])} after IPv6 literal", "hostport")
    else:
        colon = text.find(":", hstart, end)
        pstart = colon if colon >= 0 else end
        host = _host(text, hstart, pstart, strict, scheme)
    if pstart < end:
        raw = text[pstart + 1:end]
        if not _DIGITS().fullmatch(raw):
            bad = re.search(r"[^0-9]", raw)
            pos = pstart + 1 + (bad.start() if bad else 0)
            raise _error(text, pos, "port must be decimal digits", "port")
        digits = raw.lstrip("0")
        port = int(digits or "0") if len(digits) <= 5 else 65536   # int() refuses 4300+ digits
        if not 0 < port < 65536:
            shown = digits if len(digits) <= 20 else digits[:20] + "..."
            raise _error(text, pstart + 1, f"port {shown or 0} out of range 1..65535", "port")
    else:
        port = DEFAULT_PORTS[scheme]
    return user, password, host, port, end


def _no_login(text: str, i: int, scheme: str, user: str | None, rule: str) -> None:
    if user is not None:
        raise _error(text, i + 2, f"{scheme} URLs allow no user name or password", rule)


def _decode_segments(path: str) -> list[str]:
    """The decoded "/"-separated segments of *path*."""
    if "%" not in path:
        return path.split("/")
    if _ESCAPED_SLASH().search(path) is None:  # one decode for the whole path, not one per segment
        return percent_decode(path).split("/")
    return [percent_decode(s) for s in path.split("/")]


def _parse_ftp(text: str, i: int, scheme: str, strict: bool) -> URL:
    user, password, host, port, j = _authority(text, i, scheme, strict)
    path = text[j + 1:]
    typecode = None
    if ";" in path:
        m = _FTP_TYPE().search(path)
        if m is not None:
            typecode = m.group(1).lower()
            if typecode not in ("a", "i", "d"):
                raise _error(text, j + 1 + m.start(1), f"typecode {m.group(1)!r} is not a, i or d",
                             "ftptype")
            path = path[:m.start()]
    _check(text, j + 1, path, FPATH, strict)
    segs = _decode_segments(path)
    name = segs.pop()
    return FTPURL(scheme, host, port, user, password, tuple(segs), name, typecode)


def _parse_http(text: str, i: int, scheme: str, strict: bool) -> URL:
    user, password, host, port, j = _authority(text, i, scheme, strict, http=not strict)
    if user is not None and strict:
        raise _error(text, i + 2, "no user name or password is allowed in http URLs (strict mode)",
                     "hostport")
    n = len(text)
    path = ""
    search = fragment = None
    if j < n:
        if not strict:
            h = text.find("#", j)
            if h >= 0:
                fragment = text[h + 1:]
                _check(text, h + 1, fragment, _FRAGMENT, strict)
                n = h
        q = text.find("?", j, n)
        if text[j] == "/":
            path = text[j + 1:q if q >= 0 else n]
            _check(text, j + 1, path, _HPATH, strict)
            if not path.isascii():
                path = percent_encode(path, _HPATH.safe + "%" + _LENIENT_SAFE)
        if q >= 0:
            search = text[q + 1:n]
            _check(text, q + 1, search, _SEARCH, strict)
            if not search.isascii():
                search = percent_encode(search, _SEARCH.safe + "%/?" + _LENIENT_SAFE)
    return HTTPURL(scheme, host, port, user, password, path, search, fragment)


def _parse_gopher(text: str, i: int, scheme: str, strict: bool) -> URL:
    user, _, host, port, j = _authority(text, i, scheme, strict)
    _no_login(text, i, scheme, user, "hostport")
    raw = text[j + 1:]
    if not raw:
        return GopherURL(scheme, host, port, None, None, "1", "", None, None)
    _check(text, j + 1, raw, _XCHAR, strict)
    parts = raw.split("%09", 2)
    first = parts[0]
    if not first:
        raise _error(text, j + 1, "the gophertype must come before the first %09", "gtype")
    if first[0] == "%":
        gtype, sel = percent_decode(first[:3]), first[3:]
    else:
        gtype, sel = first[0], first[1:]
        if ord(gtype) > 0x7F:
            raise _error(text, j + 1, "the gophertype must be a single octet", "gtype")
    search = percent_decode(parts[1]) if len(parts) > 1 else None
    gplus = percent_decode(parts[2]) if len(parts) > 2 else None
    return GopherURL(scheme, host, port, None, None, gtype, percent_decode(sel), search, gplus)


# Lists of name=value pairs are checked and split by patterns, not by a Python loop
# per pair (a URL with a million Prospero fields took 1.5 s). The loop runs only
# from the first bad pair on, to name it.
_HEADER_PAIR = _Lazy(r"([^&=]*)=([^&]*)")
_FIELD_PAIR = _Lazy(r";([^;=]*)=([^;]*)")
_ESCAPED_AMP_EQ = _Lazy(r"%(?:26|3[Dd])")
_ESCAPED_SEMI_EQ = _Lazy(r"%3[BbDd]")
_ESCAPED_SLASH = _Lazy(r"%2[Ff]")


@functools.cache
def _header_fields(strict: bool) -> re.Pattern[str]:
    name, value = _HNAME.ok_class(strict), _HVALUE.ok_class(strict)
    part = f"(?:{name}*+={value}*+)" + ("" if strict else "?") + r"(?=&|\Z)"
    return re.compile(f"{part}(?:&{part})*+")


@functools.cache
def _field_specs(strict: bool) -> re.Pattern[str]:
    return re.compile(f"(?:;{_FIELD.ok_class(True)}*+={_FIELD.ok_class(strict)}*+(?=;|\\Z))*+")


def _decode_pairs(raw: str, pair: _Lazy, escaped_separator: _Lazy) -> list[tuple[str, str]]:
    """The (name, value) pairs of well-formed *raw*, decoded."""
    if "%" in raw:
        if escaped_separator().search(raw) is None:  # decoding keeps the separators where they are
            return pair().findall(percent_decode(raw))
        return [(percent_decode(n), percent_decode(v)) for n, v in pair().findall(raw)]
    return pair().findall(raw)


def _parse_mailto(text: str, i: int, scheme: str, strict: bool) -> URL:
    q = text.find("?", i)
    to = text[i:] if q < 0 else text[i:q]
    _check(text, i, to, _MAILTO, strict)
    headers: list[tuple[str, str]] = []
    if q >= 0:
        hq = text[q + 1:]
        m = _header_fields(strict).match(hq)
        if m is None or m.end() < len(hq):
            k = 0 if m is None else m.end() + 1   # where the first bad field starts
            pos = q + 1 + k
            for part in hq[k:].split("&"):
                eq = part.find("=")
                if eq < 0:
                    if not part and not strict:
                        pos += 1
                        continue
                    raise _error(text, pos, "a header field is name=value", "hfield")
                _check(text, pos, part[:eq], _HNAME, strict)
                _check(text, pos + eq + 1, part[eq + 1:], _HVALUE, strict)
                pos += len(part) + 1
        headers = _decode_pairs(hq, _HEADER_PAIR, _ESCAPED_AMP_EQ)
    if not to and (strict or not headers):
        raise _error(text, i, "empty address", "encoded822addr")
    return MailtoURL(scheme, percent_decode(to), tuple(headers))


def _parse_news(text: str, i: int, scheme: str, strict: bool) -> URL:
    rest = text[i:]
    if rest == "*":
        return NewsURL(scheme, "*", None)
    at = rest.find("@")
    if at >= 0 and (rest[0] == "<" or (rest[:3] in ("%3C", "%3c") and rest[-3:] in ("%3E", "%3e"))):  # from a header
        bare = re.sub(r"^(<|%3[cC])|(>|%3[eE])$", "", rest)
        raise _error(text, i, f"'<' and '>' are not part of the message-id: a message-id is written "
                              f"without its angle brackets: news:{bare}", "article")
    if at >= 0:
        left, right = rest[:at], rest[at + 1:]
        if not left:
            raise _error(text, i, "empty message-id before '@'", "article")
        _check(text, i, left, _ARTICLE, strict)
        if strict:
            _host(text, i + at + 1, len(text), strict, scheme)
        else:
            if not right:
                raise _error(text, i + at + 1, "empty domain after '@'", "article")
            m = re.search(r"[^A-Za-z0-9$\-_.+!*'(),;/?:&=\[\]]", right)
            if m is not None:
                raise _error(text, i + at + 1 + m.start(), _describe(m.group()), "article")
        return NewsURL(scheme, None, percent_decode(left) + "@" + right)
    if not (_GROUP_STRICT if strict else _GROUP_LENIENT)().fullmatch(rest):
        bad = re.search(r"[^A-Za-z0-9\-.+_]", rest)
        what = f"{_describe(bad.group())} in a newsgroup name" if bad else "bad newsgroup name"
        raise _error(text, i + (bad.start() if bad else 0), what + " (or message-id without '@')", "group")
    return NewsURL(scheme, rest, None)


def _parse_nntp(text: str, i: int, scheme: str, strict: bool) -> URL:
    user, _, host, port, j = _authority(text, i, scheme, strict)
    _no_login(text, i, scheme, user, "hostport")
    body = text[j + 1:]
    if not body:
        if strict:
            raise _error(text, j, "a newsgroup name is required", "group")
        return NNTPURL(scheme, host, port, None, None, "", None)
    slash = body.find("/")
    group = body if slash < 0 else body[:slash]
    if not (_GROUP_STRICT if strict else _GROUP_LENIENT)().fullmatch(group):
        bad = re.search(r"[^A-Za-z0-9\-.+_]", group)
        what = f"{_describe(bad.group())} in a newsgroup name" if bad else "bad newsgroup name"
        raise _error(text, j + 1 + (bad.start() if bad else 0), what, "group")
    article = None
    if slash >= 0:
        digits = body[slash + 1:]
        if not _DIGITS().fullmatch(digits):
            raise _error(text, j + 2 + slash, "the article number must be decimal digits", "digits")
        if len(digits) > 4000:  # int() refuses more than 4300 digits with a bare ValueError
            raise _error(text, j + 2 + slash, "the article number is too long", "digits")
        article = int(digits)
    return NNTPURL(scheme, host, port, None, None, group, article)


def _parse_telnet(text: str, i: int, scheme: str, strict: bool) -> URL:
    user, password, host, port, j = _authority(text, i, scheme, strict)
    if j + 1 < len(text):
        raise _error(text, j + 1, "a telnet URL has no path (only an optional final '/')", "telneturl")
    return TelnetURL(scheme, host, port, user, password)


def _parse_wais(text: str, i: int, scheme: str, strict: bool) -> URL:
    user, _, host, port, j = _authority(text, i, scheme, strict)
    _no_login(text, i, scheme, user, "hostport")
    if j >= len(text) and strict:
        raise _error(text, j, "'/' and a database name are required", "database")
    rest = text[j + 1:]
    m = re.search(r"[/?]", rest)
    search = wtype = wpath = None
    if m is None:
        database = rest
    else:
        k = m.start()
        database = rest[:k]
        if m.group() == "?":
            search = rest[k + 1:]
            _check(text, j + 2 + k, search, _SEARCH, strict)
            search = percent_decode(search)
        else:
            slash = rest.find("/", k + 1)
            if slash < 0:
                raise _error(text, j + 1 + len(rest), "a WAIS document URL is /database/wtype/wpath",
                             "waisdoc")
            wtype = rest[k + 1:slash]
            _check(text, j + 2 + k, wtype, _UCHAR, strict)
            wpath = rest[slash + 1:]
            _check(text, j + 2 + slash, wpath, _WPATH, strict)
            wtype, wpath = percent_decode(wtype), percent_decode(wpath)
    _check(text, j + 1, database, _UCHAR, strict)
    return WAISURL(scheme, host, port, None, None, percent_decode(database), search, wtype, wpath)


def _parse_file(text: str, i: int, scheme: str, strict: bool) -> URL:
    host = ""
    if text.startswith("//", i):
        start = i + 2
        end = text.find("/", start)
        if end < 0:
            if strict:
                raise _error(text, len(text), "'/' and a path must follow the host", "fileurl")
            end = len(text)
        if end > start:
            if text[start] == "[":
                host = _authority(text, i, "http", strict)[2]   # IPv6 literal, no port allowed below
                if text.find(":", text.find("]", start), end) >= 0:
                    raise _error(text, start, "file URLs have no port", "fileurl")
            else:
                host = _host(text, start, end, strict, scheme)
        j = end
    elif text.startswith("/", i) and not strict:
        j = i                                                  # file:/path, as many programs write
    else:
        raise _error(text, i, "'//' must follow 'file:'", "fileurl")
    path = text[j + 1:]
    _check(text, j + 1, path, FPATH, strict)
    return FileURL(scheme, host, percent_decode(path))


def _parse_prospero(text: str, i: int, scheme: str, strict: bool) -> URL:
    user, _, host, port, j = _authority(text, i, scheme, strict)
    _no_login(text, i, scheme, user, "prosperourl")
    if j >= len(text) and strict:
        raise _error(text, j, "'/' and an hsoname are required", "prosperourl")
    rest = text[j + 1:]
    semi = rest.find(";")
    hsoname = rest if semi < 0 else rest[:semi]
    _check(text, j + 1, hsoname, _PPATH, strict)
    pairs: list[tuple[str, str]] = []
    if semi >= 0:
        specs = rest[semi:]
        m = _field_specs(strict).match(specs)
        k = m.end() if m is not None else 0   # the fields before k are well formed
        if k < len(specs):
            pos = j + 2 + semi + k
            for spec in specs[k + 1:].split(";"):
                eq = spec.find("=")
                if eq < 0:
                    raise _error(text, pos, "a field is ;name=value", "fieldspec")
                _check(text, pos, spec[:eq], _FIELD, True)
                _check(text, pos + eq + 1, spec[eq + 1:], _FIELD, strict)
                pos += len(spec) + 1
        pairs = _decode_pairs(specs, _FIELD_PAIR, _ESCAPED_SEMI_EQ)
    return ProsperoURL(scheme, host, port, None, None, percent_decode(hsoname), tuple(pairs))


def _parse_generic(text: str, i: int, scheme: str, strict: bool) -> URL:
    part = text[i:]
    _check(text, i, part, _GENERIC if not strict else _XCHAR, strict)
    if not part.isascii():
        part = percent_encode(part, _GENERIC.safe + "%#" + _LENIENT_SAFE)
    return GenericURL(scheme, part)


_PARSERS: dict[str, Callable[[str, int, str, bool], URL]] = {
    "ftp": _parse_ftp, "ftps": _parse_ftp,
    "http": _parse_http, "https": _parse_http,
    "gopher": _parse_gopher,
    "mailto": _parse_mailto,
    "news": _parse_news,
    "nntp": _parse_nntp, "nntps": _parse_nntp,
    "telnet": _parse_telnet,
    "wais": _parse_wais,
    "file": _parse_file,
    "prospero": _parse_prospero,
}


# --------------------------------------------------------------------------
# The fast path: one pattern per scheme for the common case
# --------------------------------------------------------------------------
# In lenient mode, ASCII text is first matched against one pattern for its
# scheme. A pattern accepts only text the parsers above accept, and its builder
# makes the same value (tests/unit/test_urls.py checks both against the
# corpus and random text). Anything else (strict mode, non-ASCII, IPv6
# literals, every error, rare forms) goes to the parsers above, which name
# the position and the rule. Values are made without calling __init__
# (one object.__setattr__ per field cost ~1 us of the ~6.5 us per URL).

_new = object.__new__
_HOST_FAST = (r"((?:[A-Za-z0-9_]++(?:-++[A-Za-z0-9_]++)*+\.)*+[A-Za-z][A-Za-z0-9_]*+(?:-++[A-Za-z0-9_]++)*+"
              f"|(?:{_OCTET}\\.){{3}}{_OCTET})(?::([0-9]++))?")


def _fast_source(kind: str) -> str:
    def ok(rule: _Rule) -> str:
        return rule.ok_class(False) + "*+"

    user = ok(_USER)
    login = f"(?:({user})(?::({user}))?@)?"
    if kind == "http":
        user = f"[{_UNRESERVED};&=%]*+"   # "?" and "#" end an http authority
        return (f"//(?:({user})(?::({user}))?@)?{_HOST_FAST}(?:/({ok(_HPATH)}))?(?:\\?({ok(_SEARCH)}))?"
                f"(?:#({ok(_FRAGMENT)}))?\\Z")
    if kind == "ftp":
        return f"//{login}{_HOST_FAST}(?:/({ok(FPATH)}))?\\Z"
    if kind == "gopher":
        return f"//{_HOST_FAST}(?:/({ok(_XCHAR)}))?\\Z"
    if kind == "nntp":
        return f"//{_HOST_FAST}(?:/(?:([A-Za-z0-9][A-Za-z0-9\\-.+_]*+)(?:/([0-9]{{1,18}}+))?)?)?\\Z"
    if kind == "telnet":
        return f"//{login}{_HOST_FAST}/?\\Z"
    if kind == "wais":
        return (f"//{_HOST_FAST}(?:/({ok(_UCHAR)})(?:\\?({ok(_SEARCH)})|/({ok(_UCHAR)})/({ok(_WPATH)}))?)?\\Z")
    if kind == "prospero":
        return f"//{_HOST_FAST}(?:/({ok(_PPATH)})((?:;{_FIELD.ok_class(True)}*+={ok(_FIELD)})*+))?\\Z"
    if kind == "file":
        return f"(?://(?:{_HOST_FAST[:_HOST_FAST.index('(?::')]})?/|/(?!/))({ok(FPATH)})\\Z"
    if kind == "mailto":
        return f"({_MAILTO.ok_class(False)}++)\\Z"
    if kind == "news":
        return (f"(?:(\\*|[A-Za-z0-9][A-Za-z0-9\\-.+_]*+)|({_ARTICLE.ok_class(False)}++)"
                r"@([A-Za-z0-9$\-_.+!*'(),;/?:&=\[\]]++))\Z")
    assert kind == "generic"
    return f"[A-Za-z0-9+.\\-]++:({ok(_GENERIC)})\\Z"


# The builders below repeat their port, host and userinfo checks inline on purpose: one shared
# builder made parse() 12% slower on bench/probes/parse_corpus.py, a shared port helper 3% (measured
# 2026-11-23), and this is the path nearly every URL takes.
def _fast_port(digits: str, scheme: str) -> int:
    """The port of a fast match that has one; 0 when the full parser must decide (out of range)."""
    if len(digits) > 5:
        return 0
    port = int(digits)
    return port if port < 65536 else 0


def _fast_http(m: re.Match[str], scheme: str, text: str) -> URL | None:
    user, password, host, port_digits, path, search, fragment = m.groups()
    port = DEFAULT_PORTS[scheme] if port_digits is None else _fast_port(port_digits, scheme)
    if not port or len(host) > 253:
        return None
    if path is None:
        if "@" in text and (search is not None or fragment is not None):
            return None   # maybe "http://h?a@b": the full parser refuses the ambiguity
        path = ""
    if user is not None:
        user = percent_decode(user)
        if password is not None:
            password = percent_decode(password)
    url = _new(HTTPURL)
    url.__dict__.update(scheme=scheme, host=host.lower(), port=port, user=user, password=password,
                        path=path, search=search, fragment=fragment)
    return url


def _fast_ftp(m: re.Match[str], scheme: str, text: str) -> URL | None:
    user, password, host, port_digits, path = m.groups()
    port = DEFAULT_PORTS[scheme] if port_digits is None else _fast_port(port_digits, scheme)
    if not port or len(host) > 253:
        return None
    typecode = None
    if path is None:
        path = ""
    elif ";" in path:
        t = _FTP_TYPE().search(path)
        if t is not None:
            typecode = t.group(1).lower()
            if typecode not in ("a", "i", "d"):
                return None
            path = path[:t.start()]
    if user is not None:
        user = percent_decode(user)
        if password is not None:
            password = percent_decode(password)
    segs = _decode_segments(path)
    name = segs.pop()
    url = _new(FTPURL)
    url.__dict__.update(scheme=scheme, host=host.lower(), port=port, user=user, password=password,
                        cwd=tuple(segs), name=name, typecode=typecode)
    return url


def _fast_gopher(m: re.Match[str], scheme: str, text: str) -> URL | None:
    host, port_digits, raw = m.groups()
    port = DEFAULT_PORTS[scheme] if port_digits is None else _fast_port(port_digits, scheme)
    if not port or len(host) > 253:
        return None
    gtype, sel, search, gplus = "1", "", None, None
    if raw:
        parts = raw.split("%09", 2)
        first = parts[0]
        if not first:
            return None
        if first[0] == "%":
            gtype, sel = percent_decode(first[:3]), percent_decode(first[3:])
        else:
            gtype, sel = first[0], percent_decode(first[1:])
        if len(parts) > 1:
            search = percent_decode(parts[1])
            if len(parts) > 2:
                gplus = percent_decode(parts[2])
    url = _new(GopherURL)
    url.__dict__.update(scheme=scheme, host=host.lower(), port=port, user=None, password=None,
                        gophertype=gtype, selector=sel, search=search, gopher_plus=gplus)
    return url


def _fast_nntp(m: re.Match[str], scheme: str, text: str) -> URL | None:
    host, port_digits, group, article = m.groups()
    port = DEFAULT_PORTS[scheme] if port_digits is None else _fast_port(port_digits, scheme)
    if not port or len(host) > 253:
        return None
    url = _new(NNTPURL)
    url.__dict__.update(scheme=scheme, host=host.lower(), port=port, user=None, password=None,
                        group=group or "", article=None if article is None else int(article))
    return url


def _fast_telnet(m: re.Match[str], scheme: str, text: str) -> URL | None:
    user, password, host, port_digits = m.groups()
    port = DEFAULT_PORTS[scheme] if port_digits is None else _fast_port(port_digits, scheme)
    if not port or len(host) > 253:
        return None
    if user is not None:
        user = percent_decode(user)
        if password is not None:
            password = percent_decode(password)
    url = _new(TelnetURL)
    url.__dict__.update(scheme=scheme, host=host.lower(), port=port, user=user, password=password)
    return url


def _fast_wais(m: re.Match[str], scheme: str, text: str) -> URL | None:
    host, port_digits, database, search, wtype, wpath = m.groups()
    port = DEFAULT_PORTS[scheme] if port_digits is None else _fast_port(port_digits, scheme)
    if not port or len(host) > 253:
        return None
    url = _new(WAISURL)
    url.__dict__.update(scheme=scheme, host=host.lower(), port=port, user=None, password=None,
                        database=percent_decode(database or ""),
                        search=None if search is None else percent_decode(search),
                        wtype=None if wtype is None else percent_decode(wtype),
                        wpath=None if wpath is None else percent_decode(wpath))
    return url


def _fast_prospero(m: re.Match[str], scheme: str, text: str) -> URL | None:
    host, port_digits, hsoname, specs = m.groups()
    port = DEFAULT_PORTS[scheme] if port_digits is None else _fast_port(port_digits, scheme)
    if not port or len(host) > 253:
        return None
    url = _new(ProsperoURL)
    url.__dict__.update(scheme=scheme, host=host.lower(), port=port, user=None, password=None,
                        hsoname=percent_decode(hsoname or ""),
                        fields=tuple(_decode_pairs(specs, _FIELD_PAIR, _ESCAPED_SEMI_EQ)) if specs else ())
    return url


def _fast_file(m: re.Match[str], scheme: str, text: str) -> URL | None:
    host, path = m.groups()
    if host is not None and len(host) > 253:
        return None
    url = _new(FileURL)
    url.__dict__.update(scheme=scheme, host="" if host is None else host.lower(), path=percent_decode(path))
    return url


def _fast_mailto(m: re.Match[str], scheme: str, text: str) -> URL | None:
    url = _new(MailtoURL)
    url.__dict__.update(scheme=scheme, address=percent_decode(m.group(1)), headers=())
    return url


def _fast_news(m: re.Match[str], scheme: str, text: str) -> URL | None:
    group, left, right = m.groups()
    url = _new(NewsURL)
    if group is not None:
        url.__dict__.update(scheme=scheme, group=group, message_id=None)
    else:
        url.__dict__.update(scheme=scheme, group=None, message_id=percent_decode(left) + "@" + right)
    return url


def _fast_generic(m: re.Match[str], scheme: str, text: str) -> URL | None:
    url = _new(GenericURL)
    url.__dict__.update(scheme=scheme, schemepart=m.group(1))
    return url


_FastBuilder = Callable[[re.Match[str], str, str], "URL | None"]
_FAST_KINDS: dict[str, tuple[str, _FastBuilder]] = {
    "http": ("http", _fast_http), "https": ("http", _fast_http),
    "ftp": ("ftp", _fast_ftp), "ftps": ("ftp", _fast_ftp),
    "gopher": ("gopher", _fast_gopher),
    "nntp": ("nntp", _fast_nntp), "nntps": ("nntp", _fast_nntp),
    "telnet": ("telnet", _fast_telnet),
    "wais": ("wais", _fast_wais),
    "prospero": ("prospero", _fast_prospero),
    "file": ("file", _fast_file),
    "mailto": ("mailto", _fast_mailto),
    "news": ("news", _fast_news),
}
# scheme -> (pattern, builder, whether the pattern starts at the scheme), filled on first use
_fast_entries: dict[str, tuple[re.Pattern[str], _FastBuilder, bool]] = {}


def _fast_entry(scheme: str) -> tuple[re.Pattern[str], _FastBuilder, bool]:
    kind, build = _FAST_KINDS.get(scheme, ("generic", _fast_generic))
    entry = (re.compile(_fast_source(kind)), build, kind == "generic")
    _fast_entries["" if kind == "generic" else scheme] = entry   # one entry for all other schemes
    return entry


def _parse_fast(text: str) -> URL | None:
    """The value of lenient ASCII *text* through its scheme's pattern, or None (use the full parser)."""
    colon = text.find(":")
    if colon <= 0:
        return None
    scheme = text[:colon].lower()
    entry = _fast_entries.get(scheme)
    if entry is None:
        entry = (None if scheme in _FAST_KINDS else _fast_entries.get("")) or _fast_entry(scheme)
    pattern, build, from_start = entry
    m = pattern.match(text, 0 if from_start else colon + 1)
    if m is None or ("%" in text and _BAD_ESCAPE().search(text) is not None):
        return None
    return build(m, scheme, text)


def parse(text: str, *, strict: bool = False) -> URL:
    """Parse *text* into the URL value of its scheme.

    Raises :class:`~anyurl.errors.URLSyntaxError` (a ``ValueError``) with
    the position and the BNF rule broken. See the module docstring for what
    ``strict`` changes.
    """
    if not strict and text.__class__ is str and text.isascii():
        url = _parse_fast(text)
        if url is not None:
            return url
    return _parse_full(text, strict)


def _parse_full(text: str, strict: bool) -> URL:
    if not isinstance(text, str):  # (bytes would reach the regexes; an int has no isascii)
        raise TypeError(f"a URL must be a str, not {type(text).__name__}")
    m = _SCHEME().match(text)
    if m is None:
        raise _scheme_error(text)
    if not text.isascii():
        _check_unicode(text, strict)
    if "%" in text:
        bad = _BAD_ESCAPE().search(text)
        if bad is not None:
            raise _error(text, bad.start(), "'%' must be followed by two hex digits", "escape")
    scheme = m.group(1).lower()
    return _PARSERS.get(scheme, _parse_generic)(text, m.end(), scheme, strict)


# --------------------------------------------------------------------------
# A URL's place in its hierarchy
# --------------------------------------------------------------------------


def tree_place(u: URL) -> tuple[str, tuple[str, ...]]:
    """(origin, path segments) of a URL, decoded: where it stands in its scheme's tree.

    Parent and ancestor tests compare these, and a URL's local file name is its last segment.
    """
    if isinstance(u, GopherURL):
        return f"gopher://{u.host}:{u.port}", tuple(s for s in u.selector.split("/") if s)
    if isinstance(u, FTPURL):
        return f"{u.scheme}://{u.user}@{u.host}:{u.port}", tuple(s for s in (*u.cwd, u.name) if s)
    if isinstance(u, FileURL):
        return f"file://{u.host}", tuple(s for s in u.path.split("/") if s)
    if isinstance(u, HTTPURL):
        from urllib.parse import unquote  # here: only HTTP paths decode this way

        return f"{u.scheme}://{u.host}:{u.port}", tuple(unquote(s) for s in u.path.split("/") if s)
    if isinstance(u, NNTPURL):
        art = () if u.article is None else (str(u.article),)
        return f"{u.scheme}://{u.host}:{u.port}", (u.group, *art) if u.group else ()
    if isinstance(u, NewsURL):
        return "news:", ((u.group,) if u.group else (f"<{u.message_id}>",))
    if isinstance(u, ProsperoURL):
        return f"prospero://{u.host}:{u.port}", tuple(s for s in u.hsoname.split("/") if s)
    if isinstance(u, WAISURL):
        return f"wais://{u.host}:{u.port}", tuple(s for s in (u.database, u.search, u.wpath) if s)
    return u.scheme + ":", (str(u),)


def leaf_name(url: str, fallback: str = "") -> str:
    """The name a URL's resource goes by: its last path segment, decoded (a gopher
    selector's, an article's number or message-id), made safe as a file name."""
    try:
        segs = tree_place(parse(url))[1]
    except URLSyntaxError:
        segs = ()
    return slash_free_name(segs[-1] if segs else (fallback.strip() or "index"))


def slash_free_name(name: str) -> str:
    """*name* with no path separator or NUL in it, and never "." or "..": how listings and
    adapters name an entry (the stricter policy for files a download writes is
    :func:`anyurl.transfer.download.safe_name`)."""
    import os  # here: start-up

    name = name.replace("/", "_").replace("\x00", "_").replace(os.sep, "_")
    return "_" + name if name in (".", "..") else name


# --------------------------------------------------------------------------
# URLs in free text (the RFC's appendix)
# --------------------------------------------------------------------------

_KNOWN = "|".join(sorted(SCHEMES, key=len, reverse=True))   # longest first: "https" before "http"


def _ascii_nocase(word: str) -> str:
    # not re.IGNORECASE, which also lets "\u017f" match "s"
    return "".join(f"[{c.upper()}{c}]" for c in word)


# A wrapper must hold a ':' to give a URL, so "<>" floods yield no match for Python to see.
_WRAPPER = _Lazy(r"<([Uu][Rr][Ll]:)?([^<>:]*:[^<>]*)>")
_LT_RUN = _Lazy("<<+")
_KNOWN_START = _Lazy(rf"(?:{_KNOWN}):", re.IGNORECASE)
_BREAK_HYPHEN = _Lazy(r"-[ \t]*(?:\r\n|\r|\n)\s*")
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_SENTENCE_END = ".,;:!?'"

# Bare URLs are found by one findall over the text (a Python call per match cost more than
# the match), from a scheme's first letter: the engine skips in C to the letters that can
# start one. Its one group is the URL when the candidate is "sure", else the candidate
# and the delimiter after it (a mark: it goes the slow way). With no mark (nor a URL too
# long or an escape to check, below) the list findall makes is the answer, with no Python
# work per URL; marks are looked for in C, in the URLs joined. (Two groups, sure URL and
# other candidate, cost ~0.1 us a match for the tuples and as much again to split them;
# starting at the ':' and capturing the scheme behind it ~0.2 us.)
#
# Sure: the URL is the whole candidate (up to whitespace, '<', '>', '"') bar trailing
# punctuation and closing brackets; it holds no bracket but an IPv6 host's and does not
# end in punctuation, so _trim leaves it whole; and it fits a subset of what the scheme's
# fast parse pattern takes, with the builders' own checks (ports, typecodes, a gopher
# selector not starting "%09", escapes) written into the pattern, so parse accepts it.
# A plain http(s)/ftp(s) URL is tried first, in flat classes (the commonest, and the
# cheapest to match: each nested repeat costs per iteration), its escapes checked after
# on all the URLs at once; then each scheme's form. Anything else (brackets, an ftp
# fragment, non-ASCII...) goes the slow way: _trim, then parse. tests/unit/test_extract.py
# holds both ways to a plain reference on random and hostile text.
_SCHEME_CLASS = r"[A-Za-z0-9+.\-]"
_KEEP = r"[^\s<>\".,;:!?')\]}]"     # continues a candidate, and _trim never drops it
_ESCAPE = "%[0-9A-Fa-f]{2}"
# An optional part is written "(?:x|)", not "(?:x)?": the engine runs a group repeated
# 0-1 times through its general repeat (~0.05 us a URL for each), a branch through a
# quick test of its first character.
_PORT_SURE = "(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])|)"
_HEX4 = "[0-9A-Fa-f]{1,4}"
# the compressed and full forms ipaddress.IPv6Address takes (not the IPv4 tail or a zone)
_IPV6_SURE = (f"\\[(?:(?:{_HEX4}:){{7}}{_HEX4}|(?:{_HEX4}:){{1,7}}:|(?:{_HEX4}:){{1,6}}:{_HEX4}"
              f"|(?:{_HEX4}:){{1,5}}(?::{_HEX4}){{1,2}}|(?:{_HEX4}:){{1,4}}(?::{_HEX4}){{1,3}}"
              f"|(?:{_HEX4}:){{1,3}}(?::{_HEX4}){{1,4}}|(?:{_HEX4}:){{1,2}}(?::{_HEX4}){{1,5}}"
              f"|{_HEX4}:(?::{_HEX4}){{1,6}}|:(?:(?::{_HEX4}){{1,7}}|:))\\]")


def _run(chars: str, trimmable: str, some: bool = False, escapes: bool = True) -> str:
    """A component of *chars* (a class body) and escapes, where the characters _trim would
    drop (*trimmable*) count only when a kept character follows them."""
    escape = f"|{_ESCAPE}" if escapes else ""
    return f"(?:[{chars}]++{escape}|[{trimmable}]++(?={_KEEP}))" + ("++" if some else "*+")


def _plain_forms() -> str:
    """Plain http(s) and ftp(s) URLs after their first letter, in flat classes that back off
    trailing punctuation. A subset of the sure forms below, except that an escape is not
    checked (_bulk checks them)."""
    # Labels split by one '.' or '-', the last (after a '.') of letters: a host name the
    # parser takes. Other names (a digit or "--" in the last label...) take the sure forms.
    host = f"(?:(?:[A-Za-z0-9]++[.-])*+(?<=[./@])[A-Za-z]++|(?:{_OCTET}\\.){{3}}{_OCTET})"
    server = f"://{host}{_PORT_SURE}"
    c = "A-Za-z0-9$_+*~@&=/.,!:%\\-"
    http = f"(?<=[Hh])[Tt][Tt][Pp][Ss]?{server}(?:/[{c};]*(?:\\?[{c};?]*|)(?:#[{c};?#]*|)|)"
    ftp = f"(?<=[Ff])[Tt][Pp][Ss]?{server}(?:/[{c}?]*(?:;[Tt][Yy][Pp][Ee]=[AaIiDd]|)|)"
    # not ending in a part of an escape: the URLs' escapes are checked joined end to end
    return f"(?:{http}|{ftp})(?<!%)(?<!%[0-9A-Fa-f])"


def _sure_forms() -> dict[str, str]:
    """The sure text after each known scheme's ':' (see above)."""
    u = r"A-Za-z0-9$\-_+*~"            # unreserved and "~", without brackets or trimmable punctuation
    label = "[A-Za-z0-9_]++(?:-++[A-Za-z0-9_]++)*+"
    host = (f"(?:(?:{label}\\.(?=[A-Za-z0-9_]))*+[A-Za-z][A-Za-z0-9_]*+(?:-++[A-Za-z0-9_]++)*+"
            f"|(?:{_OCTET}\\.){{3}}{_OCTET})")
    port = _PORT_SURE
    # the parsers take an IPv6 literal for a host (not file's: a mark sends it the slow way)
    host6 = f"(?:{host}|{_IPV6_SURE})"
    user = f"(?:[A-Za-z0-9$\\-_+*.,!';&=]++|{_ESCAPE})*+"
    server = f"//(?:(?=[A-Za-z0-9$\\-_+*.,!';&=%:]*+@){user}(?::{user}|)@|){host6}{port}"
    group = f"[A-Za-z0-9](?:[A-Za-z0-9\\-+_]++|\\.++(?={_KEEP}))*+"
    query = _run(u + "@&=/", ".,!;:?")
    http = (f"{server}(?:/{_run(u + '@&=/', '.,!;:')}(?:\\?{query}|)"
            f"(?:#{_run(u + '@&=/#', '.,!;:?')}|)|)")
    ftp = f"{server}(?:/{_run(u + '@&=/', '.,!:?')}(?:;[Tt][Yy][Pp][Ee]=[AaIiDd]|)|)"
    nntp = f"//{host6}{port}(?:/(?:{group}(?:/[0-9]{{1,18}}+|)|)|)"
    # header fields: name=value, '&' between them
    field = f"{_run(u + '@/', '.,!;:?')}={_run(u + '@/=', '.,!;:?')}"
    return {
        "http": http, "https": http, "ftp": ftp, "ftps": ftp, "nntp": nntp, "nntps": nntp,
        "gopher": f"//{host6}{port}(?:/(?!%09){query}|)",
        "mailto": f"{_run(u + '@&=/', '.,!;:', some=True)}(?:{_IPV6_SURE}|)(?:\\?{field}(?:&{field})*+|)",
        "news": (f"(?:\\*|{group}|{_run(u + '&=/', '.,!;:?', some=True)}"
                 f"@(?:{_IPV6_SURE}|{_run(u[:-1] + '&=/', '.,!;:?', some=True, escapes=False)}))"),
        "telnet": f"{server}/?+",
        "file": f"(?://(?:{host}|)/|/(?!/)){query}",
        "wais": f"//{host6}{port}(?:/{_run(u, '.,!')}(?:\\?{query}|/{_run(u, '.,!')}/{query}|)|)",
        "prospero": (f"//{host6}{port}(?:/{_run(u + '@&=/', '.,!:?')}"
                     f"(?:;{_run(u[:-1] + '@&', '.,!:?')}={_run(u + '@&=', '.,!:?')})*+|)"),
    }


def _bulk_source() -> str:
    schemes = sorted(SCHEMES, key=len, reverse=True)     # longest first: "https" before "http"
    forms = _sure_forms()
    by_first: dict[str, list[str]] = {}
    for name in schemes:
        by_first.setdefault(name[0], []).append(name)
    firsts = "".join(sorted({c for name in schemes for c in (name[0], name[0].upper())}))
    rests = "|".join(f"(?<=[{first}{first.upper()}])(?:" + "|".join(_ascii_nocase(n[1:]) for n in names) + ")"
                     for first, names in by_first.items())
    frequent = [n for n in ("http", "ftp", "gopher", "mailto", "news") if n in forms]
    alternatives = []
    for n in dict.fromkeys([*frequent, *sorted(forms)]):
        if n.endswith("s") and forms.get(n[:-1]) == forms[n]:
            continue   # https, ftps, nntps: with their plain scheme, one copy of the form (compiling costs)
        rest = _ascii_nocase(n[1:]) + ("[Ss]?" if forms.get(n + "s") == forms[n] else "")
        alternatives.append(f"(?<=[{n[0]}{n[0].upper()}]){rest}:{forms[n]}")
    each = "|".join(alternatives)
    # The trailing punctuation is looked at, not taken: the group then ends the match, and
    # the next search skips it (it holds no letter).
    trail = "(?<![.,;:!?'])(?=[.,;:!?')\\]}]*+(?![^\\s<>\"]))"
    # Past the plain forms, a gate: a scheme's letters and ':' must follow, or a word of
    # prose that starts with a scheme's letter would try each form (half the time on text
    # of 20 words a URL; the gate before the plain forms cost the text 6%).
    return (f"([{firsts}](?<!{_SCHEME_CLASS}.)(?:(?:{_plain_forms()}){trail}"
            f"|(?={_SCHEME_CLASS}{{{len(schemes[-1]) - 1},{len(schemes[0]) - 1}}}+:)"
            f"(?:(?:{each}){trail}|(?:{rests}):[^\\s<>\"]++[\\s<>\"])))")


_bulk_compiled: list[re.Pattern[str]] = []   # compiled on first use


def _bulk_pattern() -> re.Pattern[str]:
    _bulk_compiled.append(re.compile(_bulk_source()))
    return _bulk_compiled[0]


def _bulk(text: str, seams: bool = False) -> list[str]:
    """The bare URLs in *text* (a '<' in it opens no wrapper), and with *seams* the mark of
    each _SEAM in it."""
    if text and not (text[-1].isspace() or text[-1] in '"<>'):
        text += " "            # a mark ends with the delimiter after its candidate
    urls = (_bulk_compiled[0] if _bulk_compiled else _bulk_pattern()).findall(text)
    if not urls:
        return urls
    joined = "".join(urls)     # a sure URL holds no delimiter
    marks = len(joined.split(None, 1)[0]) < len(joined) or '"' in joined or ">" in joined or "<" in joined
    # a plain URL's escapes are unchecked: one search over all the URLs
    escapes = "%" in joined and _BAD_ESCAPE().search(joined) is not None
    # a host is at most 253 characters: leave a long URL to the parser
    if not marks and not escapes and max(map(len, urls)) < 250:
        return urls
    found: list[str] = []
    bad = _BAD_ESCAPE()
    for url in urls:
        end = url[-1]
        if end.isspace() or end in '"<>':   # a mark
            if seams and url == _SEAM_MARK:
                found.append(url)
                continue
            url = _trim(url[:-1])
        elif len(url) < 250 and not (escapes and "%" in url and bad.search(url)):
            found.append(url)
            continue
        if _is_url(url):
            found.append(url)
    return found


# Text between wrappers goes to one bulk pass, its pieces joined by '<' (a delimiter, and
# never part of a scheme, like the '>' before a piece), or by _SEAM where a wrapped URL goes:
# a candidate that is not a URL (it holds a NUL, which a text with a _SEAM does not), so
# the pass marks it.
_SEAM = "<http:\x00<"
_SEAM_MARK = "http:\x00<"


def _is_url(candidate: str) -> bool:
    try:
        parse(candidate)
    except URLSyntaxError:
        # "#fragment" may follow any URL in text (appendix); only http keeps it when parsing.
        if "#" not in candidate:
            return False
        try:
            parse(candidate.split("#", 1)[0])
        except URLSyntaxError:
            return False
    return True


def _trim(candidate: str) -> str:
    """Drop trailing punctuation that belongs to the sentence, keeping balanced brackets.

    From the end, sentence punctuation goes, and a closing bracket goes while the
    candidate has more of it than of its opener; the first character kept ends the
    URL. Computed with counts rather than one character at a time (a million
    trailing dots or parentheses took 16 s).
    """
    body = candidate.rstrip(_SENTENCE_END + ")]}")
    tail = candidate[len(body):]
    if not tail:
        return candidate
    keep = len(body)          # the URL ends before tail[keep - len(body):] unless a bracket stops it
    for closer, opener in _CLOSERS.items():
        n = tail.count(closer)
        if not n:
            continue
        # The k-th closer of the tail stays iff the candidate up to it has no more closers
        # than openers (the tail has no openers): iff k <= allowed.
        allowed = candidate.count(opener) - body.count(closer)
        if allowed <= 0:
            continue
        k = min(allowed, n)
        at = len(closer.join(tail.split(closer, k)[:k]))   # offset of the k-th closer in tail
        keep = max(keep, len(body) + at + 1)
    return candidate[:keep]


def _sure(candidate: str) -> bool:
    """Whether *candidate* is a whole sure URL of the bulk pattern (no parse needed)."""
    m = (_bulk_compiled[0] if _bulk_compiled else _bulk_pattern()).match(candidate)
    # a mark's group ends with a delimiter; a plain URL's escapes and a long URL's host are unchecked
    return (m is not None and m.group(1) == candidate and candidate[-1] not in '"<>' and len(candidate) < 250
            and ("%" not in candidate or _BAD_ESCAPE().search(candidate) is None))


def extract_urls(text: str, *, drop_break_hyphens: bool = False) -> list[str]:
    """Find the URLs in free text, in order, following RFC 1738's appendix.

    ``<URL:...>`` and ``<...>`` wrappers delimit a URL; whitespace inside a
    wrapper (line breaks included) is ignored. The appendix says a hyphen
    followed by a line break "may or may not" be part of the URL: it is kept
    unless *drop_break_hyphens* is true. Outside wrappers, URLs of the known
    schemes are found bare, without trailing sentence punctuation (".", ",",
    ")" unless balanced...). ``<...>`` without ``URL:`` counts only for known
    schemes; anything that does not parse is skipped. The time taken grows
    linearly with the length of *text*.
    """
    if "<" not in text:
        return _bulk(text)
    found: list[str] = []
    if "<<" in text:
        text = _LT_RUN().sub("<", text)   # only the last '<' of a run can open a wrapper
    # Between wrappers, bare URLs in bulk: a bare candidate holds no '<', so none spans a
    # wrapper. split() gives the pieces and each wrapper's groups without a match object.
    parts = _WRAPPER().split(text)     # piece, "URL:" or None, content, piece, ...
    seams = "\x00" not in text
    bulk = [parts[0]]          # the texts for one bulk pass (with seams), else one pass each
    wrapped: list[str] = []
    for k in range(1, len(parts), 3):
        content = parts[k + 1]
        if drop_break_hyphens:
            content = _BREAK_HYPHEN().sub("", content)
        candidate = "".join(content.split())   # str.split() and re's \s match the same characters
        if _sure(candidate) or ((parts[k] or _KNOWN_START().match(candidate)) and _is_url(candidate)):
            if seams:
                bulk.append(_SEAM)
                wrapped.append(candidate)
            else:
                found += _bulk("<".join(bulk))
                bulk.clear()
                found.append(candidate)
        else:
            bulk += ("<", content, "<")          # e.g. <a href="http://...">
        bulk.append(parts[k + 2])
    if not seams:
        return found + _bulk("<".join(bulk))
    urls = _bulk("".join(bulk), seams=True)
    i = 0
    for url in wrapped:
        j = urls.index(_SEAM_MARK, i)
        found += urls[i:j]
        found.append(url)
        i = j + 1
    found += urls[i:]
    return found
