"""Benchmarks on the real data in ``../shared/data``: quality (``eval``) and speed (``bench``)."""
