"""The package's version, on the ground floor: every module that reports it imports it from here."""

__version__ = "0.1.0"
