"""The release number: one place, read by the package, the Client's User-Agent and the CLI."""

__version__ = "0.1.0"
