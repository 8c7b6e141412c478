"""A real headless Chromium driven over the DevTools protocol on a pipe (no extra packages).

``with Browser(tmp_path) as browser: page = browser.open(path)`` loads a file,
collects console messages, uncaught exceptions, log entries and every request
the page made, and answers DOM queries (``page.eval("document.title")``).
Chromium comes from the distribution's ``chromium`` package (scripts/test.sh
installs it). It runs with a fresh profile, no sandbox (tests run as root),
no GPU, no background networking and no component updates.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
TIMEOUT = 60.0


def chromium_path() -> str | None:
    """The Chromium executable on PATH, or None."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Page:
    """One loaded page: what it logged and requested, and a way to query its DOM."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session
        self.console: list[dict[str, Any]] = []
        self.exceptions: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []
        self.requests: list[str] = []

    def eval(self, expression: str) -> Any:
        """The JSON value of ``expression`` evaluated in the page."""
        reply = self.browser.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True},
            session=self.session,
        )
        if "exceptionDetails" in reply:
            raise AssertionError(f"evaluation failed: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        """Write a full-page PNG screenshot to ``path``."""
        metrics = self.browser.call("Page.getLayoutMetrics", {}, session=self.session)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        reply = self.browser.call(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {
                    "x": 0,
                    "y": 0,
                    "width": size["width"],
                    "height": size["height"],
                    "scale": 1,
                },
            },
            session=self.session,
        )
        path.write_bytes(base64.b64decode(reply["data"]))
        return path

    def pdf(self) -> bytes:
        """The page printed to PDF (print style sheet applied)."""
        reply = self.browser.call("Page.printToPDF", {}, session=self.session)
        return base64.b64decode(reply["data"])

    @property
    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error-level log entries, as text."""
        out = [json.dumps(m) for m in self.console if m.get("type") in ("error", "assert")]
        out += [json.dumps(e) for e in self.exceptions]
        out += [json.dumps(e) for e in self.log if e.get("level") == "error"]
        return out


class Browser:
    """Chromium with ``--remote-debugging-pipe`` (commands on fd 3, replies on fd 4)."""

    def __init__(self, workdir: Path) -> None:
        exe = chromium_path()
        if exe is None:
            raise RuntimeError("chromium is not installed (scripts/test.sh installs it)")
        self.workdir = workdir
        profile = workdir / "chromium-profile"
        profile.mkdir(parents=True, exist_ok=True)
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        # The child must see the pipe ends as fd 3 and fd 4 (moved out of the way first,
        # in case the parent's numbers are 3 or 4 themselves).
        def remap() -> None:
            os.dup2(to_child_r, 203)
            os.dup2(from_child_w, 204)
            os.dup2(203, 3)
            os.dup2(204, 4)

        self.proc = subprocess.Popen(
            [
                exe,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-sync",
                "--mute-audio",
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=(workdir / "chromium-stderr.log").open("wb"),
            preexec_fn=remap,  # noqa: PLW1509 -- only dup2 calls, before exec
            pass_fds=(3, 4),
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    # -- protocol -------------------------------------------------------------------------

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the debugging pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(self, method: str, params: dict[str, Any], session: str | None = None) -> Any:
        """Send one command and wait for its reply (events meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def _wait_event(self, method: str, session: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while True:
            for event in self._events:
                if event.get("method") == method and event.get("sessionId") == session:
                    return
            self._events.append(self._read_message(deadline))

    # -- pages ------------------------------------------------------------------------------

    def open(self, path: Path) -> Page:
        """Load ``path`` (a file) in a fresh tab; wait for its load event."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", {}, session=session)
        self._events.clear()
        self.call("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
        self._wait_event("Page.loadEventFired", session)
        # Let late console messages arrive: one round trip after the load.
        self.call("Runtime.evaluate", {"expression": "1"}, session=session)
        for event in self._events:
            if event.get("sessionId") != session:
                continue
            params = event.get("params", {})
            method = event.get("method")
            if method == "Runtime.consoleAPICalled":
                page.console.append(params)
            elif method == "Runtime.exceptionThrown":
                page.exceptions.append(params)
            elif method == "Log.entryAdded":
                page.log.append(params.get("entry", {}))
            elif method == "Network.requestWillBeSent":
                page.requests.append(params.get("request", {}).get("url", ""))
        return page

    def close(self) -> None:
        """End Chromium (this process started it) and close the pipe."""
        with contextlib.suppress(OSError):
            os.close(self._to_child)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._from_child)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
