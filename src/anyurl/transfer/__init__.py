"""Transfers built on :class:`anyurl.Client`: downloads to local files (``download``), tree walks
(``walk``), mirrors (``mirror``), and the one policy for local names of remote things (``names``)."""
