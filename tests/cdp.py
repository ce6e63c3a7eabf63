"""A minimal Chrome DevTools Protocol client for the report tests: headless Chromium on
127.0.0.1, one page, commands over the page's WebSocket (``websockets``' sync client).

``Browser(tmp_path)`` starts Chromium with the flags CI uses; ``page.open(url)`` navigates and
waits for the load event; ``page.js(expr)`` evaluates an expression and returns its JSON
value (exceptions raise ``AssertionError`` with the page's message); ``page.screenshot(path,
width)`` writes a full-page PNG at that CSS width.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--mute-audio", "--hide-scrollbars"]


class Browser:
    def __init__(self, tmp: Path) -> None:
        from websockets.sync.client import connect

        prof = tmp / "chrome-profile"
        prof.mkdir(parents=True, exist_ok=True)
        port_file = prof / "DevToolsActivePort"
        port_file.unlink(missing_ok=True)  # a reused profile keeps the last run's port
        self.proc = subprocess.Popen(
            [str(CHROMIUM), *FLAGS, "--remote-debugging-address=127.0.0.1",
             "--remote-debugging-port=0", f"--user-data-dir={prof}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            self._connect(prof / "DevToolsActivePort", connect)
        except BaseException:
            self._stop()
            raise

    def _connect(self, port_file: Path, connect: Any) -> None:
        for _ in range(300):  # up to 30 s for a cold start on a busy machine
            if port_file.exists() and port_file.read_text().strip():
                break
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30).read())
        ws = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
        self._conn = connect(ws, max_size=None, open_timeout=30)
        self.ws = self._conn.__enter__()
        self._id = 0
        self.send("Page.enable")
        self.send("Runtime.enable")

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        mid = self._id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=120))
            if msg.get("id") == mid:
                assert "error" not in msg, (method, msg["error"])
                return msg.get("result", {})

    def _wait_event(self, name: str) -> None:
        while True:
            msg = json.loads(self.ws.recv(timeout=120))
            if msg.get("method") == name:
                return

    def open(self, url: str, *, width: int = 1400, height: int = 900, scripts: bool = True) -> None:
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        self.send("Emulation.setScriptExecutionDisabled", value=not scripts)
        res = self.send("Page.navigate", url=url)
        if res.get("loaderId"):  # none for a same-document (fragment-only) navigation
            self._wait_event("Page.loadEventFired")

    def js(self, expr: str) -> Any:
        res = self.send("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in res, res["exceptionDetails"]
        return res["result"].get("value")

    def screenshot(self, path: Path, *, width: int = 1400, max_height: int = 4000) -> None:
        h = min(int(self.js("document.documentElement.scrollHeight")), max_height)
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=h, deviceScaleFactor=1,
                  mobile=False)
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def _stop(self) -> None:
        """End the browser and its helper processes (its own process group, nothing else)."""
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def screenshot_at(self, path: Path, top: float, height: int, *, width: int = 1400) -> None:
        """A PNG of the page region from ``top`` (CSS pixels from the document's top)."""
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": 0, "y": max(0.0, top), "width": width, "height": height,
                               "scale": 1})["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self._conn.__exit__(None, None, None)
        finally:
            self._stop()
