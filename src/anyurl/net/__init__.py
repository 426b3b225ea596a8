"""The connection layer shared by every scheme's driver: the one connect path and its error wording
(``connect``), the per-host pool (``pool``), the bulk reader for large bodies (``bulk``), the TLS
context (``tls``) and the hand-over of a socket the CLI connected early (``handoff``)."""
