"""The public import path of anyurl's mirrors (``mirror``, ``MirrorResult``): the code is in :mod:`anyurl.transfer.mirror`."""

from .transfer.mirror import *  # noqa: F403
from .transfer.mirror import __all__ as __all__
