"""The public import path of anyurl's fsspec filesystem (``fsspec.open("anyurl+ftp://...")``): the code is in :mod:`anyurl.adapters.fsspec`."""

from .adapters.fsspec import *  # noqa: F403
from .adapters.fsspec import __all__ as __all__
