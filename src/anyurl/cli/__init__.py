"""The ``anyurl`` command line: what only the command needs, never imported by the library.

``quick`` answers ``--version`` and ``parse`` and reads the command line without loading the
rest; ``early`` starts the first URL's connect before asyncio is imported; ``commands`` reads the
command line and runs one command; ``parser`` is the argument grammar, ``exits`` the exit-code table;
``get``, ``ls``, ``stat``, ``mirror``, ``parse``, ``upload`` and ``open`` are the commands, with
``output``, ``prompts``, ``session`` and ``urllist`` beside them; ``terminal``, ``progress`` and
``display`` are the interactive session, the progress bars and safe terminal output. Nothing is
imported here: start-up time is measured (docs/internals.md).
"""
