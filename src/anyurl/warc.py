"""The public import path of anyurl's WARC writer (``WARCWriter``): the code is in :mod:`anyurl.transfer.warc`."""

from .transfer.warc import *  # noqa: F403
from .transfer.warc import __all__ as __all__
