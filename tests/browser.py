"""Headless Chromium for the tests that open a page in a real browser (the report, the docs).

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them) and the
``selenium`` package (``dev`` extra); :func:`open_chromium` skips the test, with the reason,
where one is missing. ``KCCA_DESC_CHROMIUM`` and ``KCCA_DESC_CHROMEDRIVER`` name other binaries.
"""

import os
import shutil

import pytest

_BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def _executable(names, variable):
    return os.environ.get(variable) or next((shutil.which(n) for n in names if shutil.which(n)), None)


def open_chromium():
    """A headless Chromium WebDriver that records the console; the caller quits it."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (dev extra)")
    binary = _executable(_BROWSERS, "KCCA_DESC_CHROMIUM")
    driver_path = _executable(("chromedriver",), "KCCA_DESC_CHROMEDRIVER")
    if binary is None or driver_path is None:
        pytest.skip("headless browser test needs chromium and chromedriver (Debian: apt-get install chromium "
                    f"chromium-driver); found browser {binary}, driver {driver_path}")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1366,768"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver_path), options=options)


def console_errors(driver):
    """The SEVERE entries of the page's console since the last call."""
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def full_page_screenshot(driver, path, width=1366):
    """A PNG of the whole page at ``width`` CSS pixels (at most 16,000 tall) at ``path``."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": min(height, 16_000), "deviceScaleFactor": 1, "mobile": False})
    assert driver.save_screenshot(str(path))
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
