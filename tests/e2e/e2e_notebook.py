"""Driving a notebook in JupyterLab 4 the way a person does: open it, Run All Cells from the
Run menu, wait until every cell has run, read a cell's output, run one cell again.

Everything goes through the page's DOM (menus, cells, prompts), never through
JupyterLab internals, so the tests see what a user sees.
"""

from __future__ import annotations

import re
import time
from typing import Any

__all__ = [
    "cell",
    "cell_count",
    "code_cell_prompts",
    "menu",
    "open_notebook",
    "output_of",
    "run_all",
    "run_cell",
    "set_theme",
    "start_cell",
    "wait_all_executed",
    "wait_cell_done",
    "wait_kernel_idle",
]

_PROMPT = re.compile(r"^\[(\d+)\]:$")


def open_notebook(page: Any, server_url: str, name: str, timeout: float = 90.0) -> None:
    """Open ``name`` (relative to the server's root) alone (``?reset``: no other tab of the
    saved workspace comes back) and wait until its kernel has started and is idle (running
    cells before that makes JupyterLab ask for a kernel)."""
    page.goto(f"{server_url}/lab/tree/{name}?reset", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=timeout * 1000)
    wait_kernel_idle(page, timeout)


#: True once the visible notebook has a kernel (its name in the toolbar) that is idle.
_KERNEL_IDLE = """() => {
    const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
    if (!panel) return false;
    const name = panel.querySelector('.jp-KernelName');
    const state = panel.querySelector('.jp-Notebook-ExecutionIndicator');
    const kernel = name ? name.textContent.trim() : '';
    return kernel !== '' && kernel !== 'No Kernel'
        && state !== null && state.getAttribute('data-status') === 'idle';
}"""


def wait_kernel_idle(page: Any, timeout: float = 90.0) -> None:
    """Wait until the notebook has a kernel and its indicator says idle."""
    page.wait_for_function(_KERNEL_IDLE, timeout=timeout * 1000, polling=100)


def menu(page: Any, top: str, item: str) -> None:
    """Click ``top`` in the menu bar, then ``item`` in the menu it opens."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{re.escape(top)}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(item)}$")).first.click()


def cell(page: Any, index: int) -> Any:
    """The ``index``-th cell (0-based, every cell type counted) of the open notebook."""
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)


def cell_count(page: Any) -> int:
    """How many cells the open notebook has."""
    return int(page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").count())


def output_of(page: Any, index: int) -> Any:
    """The output area of cell ``index``."""
    return cell(page, index).locator(".jp-OutputArea")


def code_cell_prompts(page: Any) -> list[str]:
    """The input prompts of every code cell: ``[3]:`` once run, ``[*]:`` while running."""
    return [t.strip() for t in page.locator(
        ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputArea-prompt"
    ).all_inner_texts()]


def run_all(page: Any) -> None:
    """Run ▸ Run All Cells."""
    menu(page, "Run", "Run All Cells")


def wait_all_executed(page: Any, timeout: float = 120.0, previous: list[str] | None = None) -> \
        list[str]:
    """Wait until every code cell shows an execution count (and, when given, a different
    one from ``previous``) and the kernel is idle; return the prompts."""
    deadline = time.monotonic() + timeout
    prompts: list[str] = []
    while time.monotonic() < deadline:
        prompts = code_cell_prompts(page)
        done = prompts and all(_PROMPT.match(p) for p in prompts)
        if done and previous is not None:
            done = all(a != b for a, b in zip(prompts, previous))
        if done:
            wait_kernel_idle(page, max(1.0, deadline - time.monotonic()))
            return prompts
        time.sleep(0.1)
    raise TimeoutError(f"cells did not all run within {timeout:.0f} s; prompts: {prompts}")


def start_cell(page: Any, index: int) -> str:
    """Run cell ``index`` (select it, Ctrl+Enter) without waiting; return the prompt it
    had before, for :func:`wait_cell_done`."""
    target = cell(page, index)
    before = str(target.locator(".jp-InputArea-prompt").inner_text()).strip()
    target.locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")
    return before


def wait_cell_done(page: Any, index: int, before: str, timeout: float = 60.0) -> str:
    """Wait until cell ``index`` shows an execution count other than ``before`` and the
    kernel is idle; return its output's text."""
    prompt = cell(page, index).locator(".jp-InputArea-prompt")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = str(prompt.inner_text()).strip()
        if _PROMPT.match(now) and now != before:
            wait_kernel_idle(page, max(1.0, deadline - time.monotonic()))
            return str(output_of(page, index).inner_text())
        time.sleep(0.05)
    raise TimeoutError(f"cell {index} did not finish within {timeout:.0f} s")


def run_cell(page: Any, index: int, timeout: float = 60.0) -> str:
    """Run cell ``index`` again and wait for it; return its output's text."""
    return wait_cell_done(page, index, start_cell(page, index), timeout)


def set_theme(page: Any, theme: str) -> None:
    """Settings ▸ Theme ▸ ``theme`` (``"JupyterLab Dark"``, ``"JupyterLab Light"``), then
    wait until the page uses it."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Settings$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Theme$")).first.hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(theme)}$")).first.click()
    light = "true" if "Light" in theme else "false"
    page.wait_for_selector(f"body[data-jp-theme-light='{light}']", state="attached")
