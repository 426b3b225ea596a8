"""``anyurl open``: a telnet session (other schemes: ``get`` to standard output)."""

from __future__ import annotations

from .. import errors
from ..errors import AnyURLError
from .get import cmd_get
from .output import Reporter

TYPE_CHECKING = False  # not typing's: importing typing costs start-up time (mypy knows this idiom)
if TYPE_CHECKING:
    import argparse
    import inspect
    from collections.abc import Callable
    from typing import Any

    from ..client import Client
else:
    from .lazy import OnFirstUse

    argparse, inspect = map(OnFirstUse, ("argparse", "inspect"))


async def cmd_open(args: argparse.Namespace, client: Client, rep: Reporter) -> int:
    """``anyurl open URL``: a telnet session, or (other schemes) the resource on stdout."""
    from ..response import translate_errors

    u = client.parse(args.url)
    if u.scheme != "telnet":
        ns = argparse.Namespace(**vars(args))
        ns.urls, ns.output, ns.remote_name, ns.dir = [args.url], None, False, None
        ns.parallel, ns.resume, ns.max_size = 1, False, None
        return await cmd_get(ns, client, rep)
    import importlib.util

    if importlib.util.find_spec("anyurl.cli.terminal") is None:
        raise errors.NotRetrievable(
            "interactive telnet sessions are not available in this build (no anyurl.cli.terminal)", url=u)
    terminal = importlib.import_module("anyurl.cli.terminal")
    run: Callable[..., Any] = terminal.run
    try:
        result = run(u, client)
        if inspect.isawaitable(result):
            result = await result
    except AnyURLError:
        raise
    except OSError as exc:  # e.g. a terminal that cannot be watched: one line, not a traceback
        raise translate_errors(exc, u) from exc
    return result if isinstance(result, int) else 0
