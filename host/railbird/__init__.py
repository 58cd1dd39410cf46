"""Railbird: sensor-driven refereeing and scoring for pool tables (host side)."""

__version__ = "0.1.0"
