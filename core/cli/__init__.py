"""The ``trajcheck`` command. The group is built in ``app``, one module per command (``app`` says which)."""

from .app import main

__all__ = ["main"]
