"""Reusable fakes for tests and benchmarks (real servers on loopback, scripted behaviour)."""
