"""Versioned prompt texts of the benchmark (package data; read with importlib.resources)."""
