"""Helpers the tests share (importable as ``support.<module>``: tests/ is on pytest's pythonpath)."""
