"""Sans-I/O protocol logic: pure parsers and state machines. Nothing here imports asyncio."""
