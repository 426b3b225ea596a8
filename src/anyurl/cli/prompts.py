"""Terminal prompts: passwords and Gopher+ forms, asked only when a human can answer."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import asyncio
    import getpass
    from collections.abc import Sequence
    from typing import Any, TextIO

    from ..client import Client
    from .progress import DelayedProgress
else:
    from .lazy import OnFirstUse

    asyncio, getpass = map(OnFirstUse, ("asyncio", "getpass"))


# -- terminal callbacks ------------------------------------------------------


class _Paused:
    """The progress bars stopped while a prompt is on the terminal (not contextlib: start-up cost)."""

    def __init__(self, prompter: Prompter) -> None:
        self.prompter = prompter

    def __enter__(self) -> None:
        if self.prompter.progress is not None:
            self.prompter.progress.pause()

    def __exit__(self, *exc_info: object) -> None:
        if self.prompter.progress is not None:
            self.prompter.progress.resume()


class Prompter:
    """Terminal prompts for passwords and Gopher+ forms (only when stdin is a terminal)."""

    def __init__(self, stdin: TextIO | None = None, stderr: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr
        self.progress: DelayedProgress | None = None
        self.client: Client | None = None
        self._lock = asyncio.Lock()
        self._answers: dict[tuple[str, str], str | None] = {}

    def interactive(self) -> bool:
        """True when a human can answer."""
        try:
            return self.stdin.isatty()
        except (AttributeError, ValueError):
            return False

    def _paused(self) -> _Paused:
        return _Paused(self)

    async def password(self, user: str, host: str) -> str | None:
        """Client ``password_callback``: ask once per (user, host), without echo."""
        if self.client is not None:  # ~/.netrc (and Client credentials) before bothering the user
            cred = self.client.credentials_for(host, user=user)
            if cred is not None:
                return cred[1]
        if not self.interactive():
            return None
        async with self._lock:  # parallel downloads: one prompt at a time, asked once
            key = (user, host)
            if key not in self._answers:
                from .display import printable as _printable  # (display loads only when asked)

                with self._paused():
                    self._answers[key] = await asyncio.to_thread(
                        _getpass, f"Password for {_printable(user)}@{_printable(host)}: ")
            return self._answers[key]

    def form(self, fields: Sequence[Any]) -> list[str] | None:
        """Client ``form_callback`` for Gopher+ ASK forms: one answer per field.

        Each field has ``kind`` (Ask, AskP, AskL, Choose, Select, Note...),
        ``prompt``, ``default`` and ``choices``. Returns None (the user cannot
        answer) when stdin is not a terminal.
        """
        if not self.interactive():
            return None
        answers: list[str] = []
        with self._paused():
            for f in fields:
                answers.append(self._ask_field(f))
        return answers

    def _ask_field(self, f: Any) -> str:
        from .display import printable as _printable

        kind = str(getattr(f, "kind", "Ask") or "Ask").lower()
        prompt = _printable(str(getattr(f, "prompt", "") or "")).rstrip(": ")
        default = getattr(f, "default", None)
        choices = [str(c) for c in (getattr(f, "choices", None) or [])]
        if kind == "note":
            print(prompt, file=self.stderr)
            return ""
        suffix = f" [{_printable(default)}]" if default else ""
        if kind == "askp":
            answer = _getpass(f"{prompt}{suffix}: ")
            return answer or (default or "")
        if choices:
            print(prompt, file=self.stderr)
            for n, c in enumerate(choices, 1):
                print(f"  {n}) {_printable(c)}", file=self.stderr)
            while True:
                answer = self._input(f"choice 1-{len(choices)}{suffix}: ").strip()
                if not answer and default is not None:
                    return str(default)
                if answer.isdigit() and 1 <= int(answer) <= len(choices):
                    return choices[int(answer) - 1]
                if answer in choices:
                    return answer
        if kind == "askl":  # several lines, ended by a line with a single "."
            print(f"{prompt} (end with a line containing only '.')", file=self.stderr)
            lines: list[str] = []
            while True:
                line = self._input("")
                if line == "." or line == "\x04":
                    break
                lines.append(line)
            return "\n".join(lines) if lines else (default or "")
        if kind == "select":
            answer = self._input(f"{prompt} (y/n){suffix}: ").strip().lower()
            if not answer:
                return str(default or "0")
            return "1" if answer in ("y", "yes", "1") else "0"
        answer = self._input(f"{prompt}{suffix}: ")
        return answer or (default or "")

    def _input(self, prompt: str) -> str:
        self.stderr.write(prompt)
        self.stderr.flush()
        line = self.stdin.readline()
        if not line:
            return "\x04"  # EOF
        return line.rstrip("\r\n")


def _getpass(prompt: str) -> str:
    return getpass.getpass(prompt, stream=sys.stderr)
