"""The ``anyurl`` command line: what only the command needs, never imported by the library.

``quick`` answers ``--version`` and ``parse`` and reads the command line without loading the
rest; ``early`` starts the first URL's connect before asyncio is imported; ``commands`` holds the
commands (get, ls, stat, put, send, telnet, ...); ``terminal``, ``progress`` and ``display`` are
the interactive session, the progress bars and safe terminal output. Nothing is imported here:
start-up time is measured (docs/internals.md).
"""
