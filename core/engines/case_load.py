"""A big case file loaded partly on the driver, partly on the engine's workers.

Loading and validating a quarter of a million cases takes about 18 s of one core: on the
driver alone it is a serial step before any run is scored. ``eval_files`` given a
``CaseFile`` instead loads it in two parts:

1. while the engine starts (the JVM, the workers), the driver loads the file from its
   start in blocks of ``BLOCK_BYTES`` (``FrontLoad``); the first block makes the store's
   compression dictionary (``DICT_WAIT_BYTES``). When the engine is ready the driver stops after its current
   block and hands the rest of the file to the workers;
2. each worker loads one line-aligned byte range of the rest into a store compressing
   with the driver's dictionary (``load_part``), and the driver joins the parts in file
   order (``join``): the store ``dataset.load_case_store`` gives, scored the same way.

A bad row anywhere (or an id repeated across parts) makes the driver load the whole file
with ``load_case_store``, which raises its ``DatasetError`` with every bad row's line in
the file: the errors are the local eval's. Files under ``MIN_BYTES`` (or not JSON Lines)
load on the driver alone.
"""

from __future__ import annotations

import os
import pickle
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..read.case_store import CaseStore
from ..read.dataset import load_case_store, load_case_store_range, load_case_store_ranges

BLOCK_BYTES = 1 << 20  # ~2,000 volume cases, ~0.1 s: how long the engine may wait on the driver
MIN_BYTES = 8 << 20  # smaller files: a worker job costs more than it saves
#: bytes after which the driver stops even before the engine is ready (None: no bound; a
#: test sets it to make the workers' part certain)
FRONT_MOST: int | None = None
#: the driver goes on past the engine's start until the store has made its compression
#: dictionary (the workers' parts then compress with it as they load), up to this many
#: bytes; past them the parts stay plain and the joined store makes it (``CaseStore.extend``)
DICT_WAIT_BYTES = 4 << 20


class CaseFile:
    """A JSON Lines case file for ``engines.eval_files`` to load (module docstring); called
    with no arguments it loads the whole file on the calling process
    (``dataset.load_case_store``), as a plain loader function would."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)

    def __call__(self) -> CaseStore:
        return load_case_store(self.path)

    def split(self) -> bool:
        """Whether the file is worth loading partly on the workers."""
        p = Path(self.path)
        return (p.suffix.lower() in (".jsonl", ".ndjson") and p.is_file()
                and p.stat().st_size >= MIN_BYTES)


class FrontLoad:
    """Loads ``path`` from its start, block by block, until ``halt`` (then finishes its
    block), ``most`` bytes or the end, and at least until the store has its dictionary
    (or ``DICT_WAIT_BYTES`` are loaded); ``run`` in a thread. The blocks are checked as
    one stream (``dataset.load_case_store_ranges``: what a block learns, the next uses).
    ``store`` holds the cases so far, ``pos`` where the next line starts, ``cpu_s`` the
    thread's CPU seconds."""

    def __init__(self, path: str, block: int | None = None, most: int | None = None) -> None:
        self.path, self.block = path, block or BLOCK_BYTES
        self.most = most
        self.size = os.path.getsize(path)
        self.store = CaseStore()
        self.pos = 0
        self.cpu_s = 0.0
        self._halt = threading.Event()

    def run(self) -> None:
        """Load blocks until halted (once the store has its dictionary) or at the end;
        a bad row: the whole file loaded (``load_case_store`` raises its error)."""
        t0 = time.thread_time()
        try:
            if not load_case_store_ranges(self.path, self._blocks(), self.store):
                self.store, self.pos = load_case_store(self.path), self.size
        finally:
            self.cpu_s = time.thread_time() - t0

    def _blocks(self) -> Iterator[tuple[int, int]]:
        """The next block's range while the load should go on; ``pos`` moves past a block
        when the next one is asked for (its rows are all in then)."""
        with open(self.path, "rb") as f:
            while self.pos < self.size and (
                    (self.store.dictionary is None and self.pos < DICT_WAIT_BYTES)
                    or not (self._halt.is_set() or (self.most is not None
                                                    and self.pos >= self.most))):
                end = min(self.pos + self.block, self.size)
                if end < self.size:
                    f.seek(end - 1)
                    f.readline()  # to the end of the line holding byte end - 1
                    end = min(f.tell(), self.size)
                yield self.pos, end
                self.pos = end

    def halt(self) -> None:
        """Stop after the current block (``run`` returns then)."""
        self._halt.set()


def load_part(path: str, start: int, end: int, codec: str, dictionary: bytes | None) -> bytes:
    """On a worker: the cases of byte range ``[start, end)`` of ``path`` in a store made
    with the driver's ``codec`` and ``dictionary``, pickled with whether every row was good
    and the CPU seconds taken (what ``join`` reads)."""
    t0 = time.thread_time()
    store = CaseStore(codec=codec, dictionary=dictionary)
    ok = load_case_store_range(path, start, end, store)
    return pickle.dumps((ok, store if ok else None, time.thread_time() - t0),
                        protocol=pickle.HIGHEST_PROTOCOL)


def join(path: str, store: CaseStore, parts: list[bytes]) -> tuple[CaseStore, float]:
    """``store`` (the driver's front) with the workers' parts (``load_part``'s bytes, in
    file order) added, and the workers' CPU seconds; the whole file loaded instead
    (``load_case_store``, which raises the file's ``DatasetError``) when a part had a bad
    row or repeats an id."""
    cpu = 0.0
    for blob in parts:
        ok, part, c = pickle.loads(blob)
        cpu += c
        if not ok:
            return load_case_store(path), cpu
        try:
            store.extend(part)
        except ValueError:  # an id in two parts: the whole file's load names the lines
            return load_case_store(path), cpu
    return store, cpu


def rest_ranges(front: FrontLoad, n: int) -> list[tuple[int, int]]:
    """The part of the file ``front`` left, cut in ``n`` line-aligned ranges."""
    from .files import ranges

    return ranges(front.path, n, front.pos) if front.pos < front.size else []


def start_while_loading(cf: CaseFile, start: Callable[[], Any],
                        load_rest: Callable[[Any, list[tuple[int, int]], str, bytes | None],
                                            list[bytes]],
                        workers: int, stats: dict[str, Any]) -> tuple[CaseStore, Any]:
    """``(store, handle)``: ``handle = start()`` (the engine) run in this thread while a
    ``FrontLoad`` of ``cf`` runs in another; then the rest of the file, cut in ``workers``
    ranges, loaded by ``load_rest(handle, ranges, codec, dictionary)`` (the engine's job:
    ``load_part``'s bytes per range, in file order) and joined. ``stats`` gets the driver's
    and the workers' CPU seconds and where the driver stopped."""
    from concurrent.futures import ThreadPoolExecutor

    front = FrontLoad(cf.path, most=FRONT_MOST)
    with ThreadPoolExecutor(1, thread_name_prefix="trajcheck-cases") as ex:
        fut = ex.submit(front.run)
        try:
            handle = start()
        finally:
            front.halt()
        fut.result()  # the load's error first: the engine started fine
    stats.update(cases_front_bytes=front.pos, cases_bytes=front.size)
    t0 = time.thread_time()
    todo = rest_ranges(front, workers)
    if todo:
        st = front.store
        store, wcpu = join(cf.path, st, load_rest(handle, todo, st.codec, st.dictionary))
    else:
        store, wcpu = front.store, 0.0
    stats.update(cases_driver_cpu_s=front.cpu_s + time.thread_time() - t0,
                 cases_worker_cpu_s=wcpu)
    return store, handle


__all__ = ["BLOCK_BYTES", "MIN_BYTES", "CaseFile", "FrontLoad", "join", "load_part",
           "rest_ranges", "start_while_loading"]
