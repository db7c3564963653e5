"""The report in a real browser: headless Chromium driven by Selenium.

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them) and the
``selenium`` package (``dev`` extra); skipped, with the reason, where one is missing.
"""

import os
import shutil

import pytest

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (dev extra)")

pytestmark = pytest.mark.browser

_BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def _executable(names, variable):
    path = os.environ.get(variable) or next((shutil.which(n) for n in names if shutil.which(n)), None)
    return path


@pytest.fixture(scope="module")
def browser():
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
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    yield driver
    driver.quit()


def _full_page_screenshot(driver, path, width=1366):
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": min(height, 16_000), "deviceScaleFactor": 1, "mobile": False})
    assert driver.save_screenshot(str(path))
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_report_loads_in_chromium_with_every_image_and_the_gold_marked(browser, report_page, tmp_path):
    browser.get(report_page.as_uri())
    images = browser.find_elements("tag name", "img")
    assert images
    broken = browser.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt)")
    assert broken == [], f"images that did not load: {broken}"
    gallery = browser.find_element("id", "gallery")
    markers = gallery.find_elements("css selector", ".gold-marker")
    assert markers and all(m.is_displayed() and m.text.startswith("gold · rank") for m in markers)
    framed = gallery.find_elements("css selector", ".caption-query .gold img")
    assert framed and all(f.value_of_css_property("border-top-color") == "rgba(26, 127, 55, 1)" for f in framed)
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == [], f"console errors: {errors}"
    _full_page_screenshot(browser, tmp_path / "report.png")
    assert (tmp_path / "report.png").stat().st_size > 10_000
    # Print layout: the page still lays out with every figure within the A4 text width.
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    widths = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure img')).map(i => i.getBoundingClientRect().right)")
    page_width = browser.execute_script("return document.documentElement.clientWidth")
    assert max(widths) <= page_width
    _full_page_screenshot(browser, tmp_path / "report_print.png", width=794)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
