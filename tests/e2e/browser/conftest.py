"""The console in a real browser: Debian's headless Chromium driven by Selenium against the local
front (`memory serve`'s server) on the embedded database. Skipped, saying why, only where
/usr/bin/chromium is not installed (`.ci/run` installs it)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT_S = 20


def chromium_options(user_data_dir: Path, download_dir: Path) -> Any:
    from selenium.webdriver.chrome.options import Options

    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
        f"--user-data-dir={user_data_dir}",
    ):
        options.add_argument(flag)
    options.add_experimental_option(
        "prefs",
        {
            "download.default_directory": str(download_dir),
            "download.prompt_for_download": False,
            "safebrowsing.enabled": False,
        },
    )
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return options


def start_browser(download_dir: Path) -> tuple[Any, Path]:
    """A fresh headless Chromium (its own profile folder), downloads going to `download_dir`."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = Path(tempfile.mkdtemp(prefix="console-chromium-"))
    driver = webdriver.Chrome(
        service=Service(str(CHROMEDRIVER)), options=chromium_options(profile, download_dir)
    )
    driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(download_dir)}
    )
    return driver, profile


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.skip("Debian's chromium and chromium-driver are not installed (/usr/bin/chromium)")
    downloads = tmp_path_factory.mktemp("downloads")
    driver, profile = start_browser(downloads)
    driver.download_dir = downloads  # type: ignore[attr-defined]
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


class Console:
    """The console page in the browser, signed in by pasting a token as a user would."""

    def __init__(self, driver: Any, base: str) -> None:
        self.driver = driver
        self.base = base

    def wait(self, condition: Callable[[Any], Any], timeout: float = WAIT_S) -> Any:
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, timeout).until(condition)

    def find(self, css: str, timeout: float = WAIT_S) -> Any:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec

        return self.wait(ec.visibility_of_element_located((By.CSS_SELECTOR, css)), timeout)

    def all(self, css: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return list(self.driver.find_elements(By.CSS_SELECTOR, css))

    def sign_in(self, token: str, screen: str = "") -> None:
        self.driver.get(f"{self.base}/console/")
        self.driver.execute_script("sessionStorage.clear()")
        self.driver.get("about:blank")  # a fresh document: the page keeps its token in memory too
        self.driver.get(f"{self.base}/console/#/{screen}")
        box = self.find("textarea[name=token]")
        box.send_keys(token)
        self.find("#main form button[type=submit]").click()
        self.find("#sign-out")

    def text_of(self, css: str) -> str:
        return str(self.find(css).text)

    def wait_text(self, css: str, needle: str, timeout: float = WAIT_S) -> str:
        from selenium.common.exceptions import StaleElementReferenceException

        def has(_: Any) -> str | bool:
            try:
                return next((e.text for e in self.all(css) if needle in e.text), False)
            except StaleElementReferenceException:
                return False

        return str(self.wait(has, timeout))

    def severe_logs(self) -> list[str]:
        return [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]


@pytest.fixture(scope="module")
def console(browser: Any, api: Any) -> Console:
    return Console(browser, api.base)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Iterator[None]:
    """On a failure, the page's text and the browser's log go into the report."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    driver = item.funcargs.get("browser") if hasattr(item, "funcargs") else None
    if report.when == "call" and report.failed and driver is not None:
        try:
            body = driver.find_element("css selector", "body").text
            logs = "\n".join(e["message"] for e in driver.get_log("browser"))
            report.sections.append(("console page", f"{driver.current_url}\n{body}\n--- log ---\n{logs}"))
        except Exception as exc:  # the browser itself may be what failed
            report.sections.append(("console page", f"unavailable: {exc}"))
