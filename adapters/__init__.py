"""Thin adapters exposing trajcheck's metrics inside DeepEval, RAGAS and LangSmith.

Each submodule imports its framework lazily; importing this package imports none of them.
"""
