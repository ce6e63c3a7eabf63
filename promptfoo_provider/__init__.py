"""trajcheck for promptfoo: a Python assertion (``assertion.py``), a Python provider
(``provider.py``) and a suite-summary extension hook (``summary.py``), installed with the
package as ``trajcheck.promptfoo``.

promptfoo loads Python files by path. From a pip install, either point at the installed files
(``python -m trajcheck.promptfoo path`` prints their folder) or write small entry files into
your project with ``python -m trajcheck.promptfoo init [DIR]`` and reference them relative to
your config (``file://trajcheck_assert.py``, ``file://trajcheck_provider.py``,
``file://trajcheck_summary.py:extension_hook``).
"""
