"""anyurl inside other libraries: fsspec (``fsspec``), Scrapy (``scrapy``) and urllib.request
(``urllib``). Their public import paths stay ``anyurl.fsspec``, ``anyurl.scrapy`` and ``anyurl.urllib``."""
