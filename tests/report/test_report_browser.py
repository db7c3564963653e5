"""The report in a real browser: headless Chromium driven by Selenium.

Needs Debian's ``chromium`` and ``chromium-driver`` and the ``selenium`` package
(the ``browser`` fixture of ``tests/conftest.py``); skipped, with the reason, where one is missing.
"""

import pytest

from browser import console_errors, full_page_screenshot

pytestmark = pytest.mark.browser


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
    errors = console_errors(browser)
    assert errors == [], f"console errors: {errors}"
    full_page_screenshot(browser, tmp_path / "report.png")
    assert (tmp_path / "report.png").stat().st_size > 10_000
    # Print layout: the page still lays out with every figure within the A4 text width.
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    widths = browser.execute_script(
        "return Array.from(document.querySelectorAll('figure img')).map(i => i.getBoundingClientRect().right)")
    page_width = browser.execute_script("return document.documentElement.clientWidth")
    assert max(widths) <= page_width
    full_page_screenshot(browser, tmp_path / "report_print.png", width=794)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
