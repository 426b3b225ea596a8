"""The connection layer shared by every scheme's driver: the per-host pool (``pool``), the bulk
reader for large bodies (``bulk``), and the hand-over of a socket the CLI connected early (``handoff``)."""
