"""The public import path of anyurl's atomic downloads (``download``, ``name_for_url``, ``WouldOverwrite``): the code is in :mod:`anyurl.transfer.download`."""

from .transfer.download import *  # noqa: F403
from .transfer.download import __all__ as __all__
