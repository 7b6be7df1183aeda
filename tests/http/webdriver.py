"""A minimal W3C WebDriver client over the standard library, for Debian's chromedriver.

Why not selenium: the pinned selenium needs a certifi newer than the package
index serves here, and the tests use a dozen WebDriver commands, each one
JSON request to chromedriver on a loopback port. Nothing is downloaded at run
time: the browser is ``/usr/bin/chromium`` and the driver
``/usr/bin/chromedriver`` (``apt-get install -y chromium chromium-driver``).
"""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INSTALL = "apt-get install -y chromium chromium-driver"
_ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or ``None`` when they can."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if shutil.which(path) is None:
            return f"{path} is missing: {INSTALL}"
    return None


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class WebDriverError(RuntimeError):
    """A WebDriver command failed (the message is the driver's)."""


class Browser:
    """One headless Chromium session driven through chromedriver."""

    def __init__(self, *, width: int = 1400, height: int = 950) -> None:
        """Start chromedriver and a headless browser session."""
        self.port = free_port()
        self._driver = subprocess.Popen([CHROMEDRIVER, f"--port={self.port}"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                self._call("GET", "/status")
                break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline:
                    self._driver.kill()
                    raise
                time.sleep(0.1)
        caps = {"browserName": "chrome", "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-first-run", "--disable-extensions", f"--window-size={width},{height}"]}}
        value = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})
        self.session = value["sessionId"]

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data,
                                     method=method,
                                     headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as res:
                return json.loads(res.read())["value"]
        except urllib.error.HTTPError as exc:
            detail = json.loads(exc.read() or b"{}").get("value", {})
            raise WebDriverError(f"{method} {path}: {detail.get('error')}: "
                                 f"{str(detail.get('message', ''))[:300]}") from None

    def _s(self, method: str, path: str, body: Any = None) -> Any:
        return self._call(method, f"/session/{self.session}{path}", body)

    def get(self, url: str) -> None:
        """Load ``url`` and wait for the page."""
        self._s("POST", "/url", {"url": url})

    def find_all(self, css: str) -> list[str]:
        """Element ids matching ``css``."""
        return [e[_ELEMENT] for e in self._s("POST", "/elements",
                                             {"using": "css selector", "value": css})]

    def wait_for(self, css: str, *, count: int = 1, timeout_s: float = 60) -> list[str]:
        """Wait until at least ``count`` elements match ``css``; return them."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = self.find_all(css)
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {count} element(s) matching {css!r} within "
                                   f"{timeout_s:.0f} s; page status: {self.script_text()}")
            time.sleep(0.1)

    def script_text(self) -> str:
        """The page's status line (where the app reports errors)."""
        return str(self.execute("return (document.querySelector('#status') || {}).textContent"))

    def click(self, element: str) -> None:
        """Click an element."""
        self._s("POST", f"/element/{element}/click", {})

    def type(self, element: str, text: str) -> None:
        """Type ``text`` into an element."""
        self._s("POST", f"/element/{element}/value", {"text": text})

    def text(self, element: str) -> str:
        """An element's rendered text."""
        return str(self._s("GET", f"/element/{element}/text"))

    def execute(self, script: str, *args: Any) -> Any:
        """Run JavaScript in the page and return its result."""
        return self._s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def accept_alert(self, timeout_s: float = 10) -> str:
        """Accept the confirmation dialog that is open (waiting for it); return its text."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                text = str(self._s("GET", "/alert/text"))
                self._s("POST", "/alert/accept", {})
                return text
            except WebDriverError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def screenshot(self) -> bytes:
        """A PNG of the viewport."""
        return base64.b64decode(self._s("GET", "/screenshot"))

    def close(self) -> None:
        """End the session and the driver."""
        try:
            self._s("DELETE", "")
        finally:
            self._driver.terminate()
            self._driver.wait(timeout=30)
