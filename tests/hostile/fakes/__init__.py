"""Fault servers and helpers for tests/hostile: what a real server will not do, on loopback."""
