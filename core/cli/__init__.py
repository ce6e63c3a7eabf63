"""The ``trajcheck`` command. The commands live in ``app`` (and ``judges``)."""

from .app import main

__all__ = ["main"]
