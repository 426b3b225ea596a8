"""The public import path of anyurl's batches (``Batch``, ``Memory``, ``Directory``, ``Sink``...):
the code is in :mod:`anyurl.transfer.batch`."""

from .transfer.batch import *  # noqa: F403
from .transfer.batch import __all__ as __all__
