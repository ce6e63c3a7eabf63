"""The ``schema`` matcher: the predicted value validated against a JSON Schema (Draft
2020-12), references resolved only inside the schema (``compile_schema``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import MatcherError, SchemaError
from .base import (
    DEFAULT_CONTEXT,
    MISSING,
    MatchContext,
    Matcher,
    is_empty,
)


@dataclass(frozen=True, repr=False)
class SchemaMatcher(Matcher):
    """The predicted value validates against a JSON Schema (Draft 2020-12).

    The schema comes from the spec (``"schema"``) or is the expected value. jsonschema is
    imported on first use. An invalid schema raises SchemaError.
    """

    schema: Any = None
    _validator: Any = field(default=None, compare=False)
    name = "schema"

    def __post_init__(self) -> None:
        if self.schema is not None:
            object.__setattr__(self, "_validator", compile_schema(self.schema))

    def _check(self, schema: Any, predicted: Any) -> bool:
        v = self._validator if self._validator is not None else compile_schema(schema)
        if predicted is MISSING:
            return False
        try:
            return bool(v.is_valid(predicted))
        except RecursionError as e:
            raise MatcherError("schema matcher: value nested too deeply to validate") from e
        except Exception as e:  # an unresolvable reference (nothing is ever fetched)
            raise MatcherError(f"schema matcher: cannot validate: {e}") from e

    def __call__(self, expected: Any, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        return self._check(expected, predicted)

    def check_unexpected(self, predicted: Any, ctx: MatchContext = DEFAULT_CONTEXT) -> bool:
        if predicted is MISSING:
            return False
        if self._validator is None:
            return not is_empty(predicted)
        return self._check(None, predicted)


def _outside_refs(schema: Any) -> list[str]:
    """``$ref`` / ``$dynamicRef`` values of ``schema`` that point outside it: anything but a
    fragment (``#/$defs/x``) or an ``$id`` the schema itself declares."""
    ids: set[str] = set()
    refs: list[str] = []
    todo = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, Mapping):
            for k, v in node.items():
                if k == "$id" and isinstance(v, str):
                    ids.add(v.split("#", 1)[0])
                elif k in ("$ref", "$dynamicRef") and isinstance(v, str):
                    refs.append(v)
                elif isinstance(v, (Mapping, list)):
                    todo.append(v)
        elif isinstance(node, list):
            todo.extend(x for x in node if isinstance(x, (Mapping, list)))
    return [r for r in refs if not r.startswith("#") and r.split("#", 1)[0] not in ids]


def _no_retrieval(uri: str) -> Any:
    """The schema registry's retriever: nothing is fetched (no network, no files)."""
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def compile_schema(schema: Any, *, where: str = "schema matcher") -> Any:
    """A jsonschema Draft 2020-12 validator for ``schema``; SchemaError (naming ``where``) if invalid.

    References resolve only inside ``schema`` (fragments and the ``$id``s it declares): a
    ``$ref`` to a URL or a file is refused here (SchemaError), and the validator's registry
    retrieves nothing, so a dataset row can never make trajcheck read a file or the network,
    nor let a fetched schema decide a verdict.
    """
    import jsonschema
    from jsonschema.validators import Draft202012Validator
    from referencing import Registry

    if not isinstance(schema, (dict, bool)):
        raise SchemaError(f"{where}: a JSON Schema must be an object or boolean, got {schema!r}")
    try:
        Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        path = "/".join(str(p) for p in e.path) or "(root)"
        raise SchemaError(f"{where}: not a valid JSON Schema at {path}: {e.message}") from e
    except RecursionError as e:
        raise SchemaError(f"{where}: schema nested too deeply") from e
    outside = _outside_refs(schema)
    if outside:
        raise SchemaError(f"{where}: $ref {outside[0]!r} points outside the schema; only references "
                          "within the row's own schema are resolved (no network, no files)")
    return Draft202012Validator(schema, registry=Registry(retrieve=_no_retrieval))  # type: ignore[call-arg]

