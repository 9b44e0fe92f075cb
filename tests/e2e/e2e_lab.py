"""A throw-away JupyterLab server for the browser tests.

:func:`start_lab` runs ``python -m jupyter lab`` (the test's own interpreter, so the
kernel is the same venv) on 127.0.0.1, a free port, no token and no password, with
``root`` as its root directory and every Jupyter directory (config, settings,
workspaces, runtime, IPython profile) inside ``state``, so nothing from the user's home
leaks in and nothing is left behind. It waits until the server answers ``/api/status``
and returns a :class:`LabServer`; :meth:`LabServer.stop` shuts it down with its kernels.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LabServer", "free_port", "lab_command", "start_lab"]

#: JupyterLab settings for a quiet, deterministic UI: no news or update checks (they would
#: reach the network and pop up a notification), the light theme, and every cell attached
#: to the page (no windowing: cells out of view stay in the DOM for the tests to read).
SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True},
    "@jupyterlab/apputils-extension/themes.jupyterlab-settings": {"theme": "JupyterLab Light"},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none"},
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def lab_command(root: Path, port: int) -> list[str]:
    """The command line: ``python -m jupyter lab`` with no browser, token or password."""
    return [
        sys.executable, "-m", "jupyter", "lab", "--no-browser",
        "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.ip=127.0.0.1",
        f"--port={port}", "--port-retries=0", "--allow-root",
        f"--ServerApp.root_dir={root}", "--ServerApp.open_browser=False",
        "--LabApp.news_url=None", "--LabApp.check_for_updates_class="
        "jupyterlab.handlers.announcements.NeverCheckForUpdate",
    ]


@dataclass
class LabServer:
    """A running JupyterLab server (``url`` ends without a slash)."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def log_tail(self, lines: int = 40) -> str:
        """The end of the server's log, for error messages."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 15.0) -> None:
        """Shut the server down: SIGTERM (it shuts its kernels down first), SIGKILL if it
        is still running after ``timeout`` seconds."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)


def _environment(state: Path) -> dict[str, str]:
    env = dict(os.environ)
    dirs = {"JUPYTER_CONFIG_DIR": "config", "JUPYTER_RUNTIME_DIR": "runtime",
            "JUPYTERLAB_SETTINGS_DIR": "settings", "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
            "IPYTHONDIR": "ipython"}
    for var, sub in dirs.items():
        path = state / sub
        path.mkdir(parents=True, exist_ok=True)
        env[var] = str(path)
    for relative, values in SETTINGS.items():
        path = state / "settings" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("JUPYTER_TOKEN", None)
    return env


def start_lab(root: Path, state: Path, timeout: float = 90.0) -> LabServer:
    """Start JupyterLab serving ``root`` and wait until it answers.

    Raises
    ------
    RuntimeError
        The server exited or did not answer within ``timeout`` seconds (the message
        ends with its log).
    """
    port = free_port()
    log = state / "jupyterlab.log"
    state.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        process = subprocess.Popen(
            lab_command(root, port), cwd=root, env=_environment(state), stdout=out,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = LabServer(process, f"http://127.0.0.1:{port}", log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {process.returncode}:\n"
                               f"{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.url}/api/status", timeout=2) as answer:
                if answer.status == 200:
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    server.stop()
    raise RuntimeError(f"jupyter lab did not answer on {server.url} within {timeout:.0f} s:\n"
                       f"{server.log_tail()}")
