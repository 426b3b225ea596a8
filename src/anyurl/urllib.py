"""The public import path of anyurl's urllib.request opener (``anyurl.urllib.install()``): the code is in :mod:`anyurl.adapters.urllib`."""

from .adapters.urllib import *  # noqa: F403
from .adapters.urllib import __all__ as __all__
