"""The public import path of anyurl's Scrapy download handler (``DOWNLOAD_HANDLERS`` names ``anyurl.scrapy.AnyURLDownloadHandler``): the code is in :mod:`anyurl.adapters.scrapy`."""

from .adapters.scrapy import *  # noqa: F403
from .adapters.scrapy import __all__ as __all__
