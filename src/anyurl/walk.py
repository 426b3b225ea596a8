"""The public import path of anyurl's tree walks (``walk``, ``Found``): the code is in :mod:`anyurl.transfer.walk`."""

from .transfer.walk import *  # noqa: F403
from .transfer.walk import __all__ as __all__
