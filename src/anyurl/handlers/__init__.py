"""One asyncio driver per scheme. Protocol logic lives in anyurl.protocols."""
