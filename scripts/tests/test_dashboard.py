"""The dashboard page: generated from a history, then opened from the file system in a real
headless Chromium (the distribution's chromium and chromium-driver, driven by Selenium), which
must render every plot, band and change point and the table of open regressions. Without Chromium
the browser test skips with the reason, except in CI (CI=true), where .ci/run installs it and a
missing browser is a failure."""

import os
import re
import shutil

import pytest
from conftest import require
from test_history import NAIVE, PADDED, TUNED, WARP, history_of

from gemm_study.cli.history import main as history_main

require("otava", "apache-otava")  # the history's change-point search

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


@pytest.fixture
def dashboard(tmp_path):
    """A history of six revisions: tuned 10% slower from r2 (open), naive_row failing at r3,
    warptile missing at r4, padded steady."""
    levels = {TUNED: [1, 1, 1.1, 1.1, 1.1, 1.1], WARP: [1] * 6, NAIVE: [1] * 6, PADDED: [1] * 6}
    paths = history_of(tmp_path, levels, errors={NAIVE: {3}}, missing={WARP: {4}})
    page = tmp_path / "site" / "dashboard.html"
    assert (
        history_main([*map(str, paths), "--out", str(tmp_path / "out"), "--no-figures", "--dashboard", str(page)]) == 1
    )
    return page


def test_the_page_is_self_contained(dashboard):
    text = dashboard.read_text()
    assert "http://" not in text and "https://" not in text and "<script" not in text and " src=" not in text
    assert text.count('<svg class="plot') == 8 and text.count('class="changepoint slower"') == 2
    assert f"--ncu-command={TUNED}" in text and "git checkout r2aaaaaaaaaaa" in text


def axis_range(svg):
    """(top, bottom) of a panel's y axis, from its two axis labels."""
    labels = re.findall(r'text-anchor="end">([-0-9.e+]+)</text>', svg)
    return float(labels[0]), float(labels[1])


def test_every_panel_of_a_kind_spans_the_same_relative_range(dashboard):
    """The 10% step sets the range: the steady benchmarks' panels span as much relative to their
    level, so their noise looks as small as it is (each panel is not scaled to its own extremes)."""
    text = dashboard.read_text()
    panels = re.findall(r'<svg class="plot statistic".*?</svg>', text, re.DOTALL)
    spans = [(top - bottom) / ((top + bottom) / 2) for top, bottom in map(axis_range, panels)]
    assert len(spans) == 4 and max(spans) == pytest.approx(min(spans), rel=0.05) and min(spans) > 0.09


def test_the_page_has_an_index_and_whole_revision_labels(dashboard):
    text = dashboard.read_text()
    index = re.search(r'<nav id="index">.*?</nav>', text, re.DOTALL).group(0)
    for family in ("tuned", "warptile", "naive_row", "shared_col_padded"):
        assert f'href="#family-{family}"' in index and f'id="family-{family}"' in text
    assert ">r2aaaaaaaaaaa</text>" in text  # the whole label, not its first 14 characters


def chrome():
    if not (BROWSER and DRIVER):
        if os.environ.get("CI") == "true":
            pytest.fail("CI must have chromium and chromium-driver (.ci/run installs them)")
        pytest.skip("no chromium / chromedriver here: apt-get install chromium chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = BROWSER
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,2400",
    ):
        options.add_argument(flag)
    from selenium.webdriver.chrome.service import Service

    return webdriver.Chrome(service=Service(DRIVER), options=options)


def test_chromium_renders_the_plots_and_the_open_regressions(dashboard, tmp_path):
    from selenium.webdriver.common.by import By

    driver = chrome()
    try:
        driver.get(dashboard.as_uri())
        assert driver.title == "Regression dashboard: NVIDIA H200"
        plots = driver.find_elements(By.CSS_SELECTOR, "svg.plot")
        assert len(plots) == 8 and all(p.size["width"] > 300 and p.size["height"] > 100 for p in plots)
        page_width = driver.execute_script("return document.body.clientWidth")
        assert sum(p.size["width"] for p in plots[:2]) > 0.9 * page_width  # two panels fill the width
        bands = driver.find_elements(By.CSS_SELECTOR, "svg.plot polygon.band")
        assert len(bands) >= 8 and all(b.rect["height"] > 0 for b in bands)
        slower = driver.find_elements(By.CSS_SELECTOR, "g.changepoint.slower")
        assert [g.get_attribute("data-revision") for g in slower] == ["r2aaaaaaaaaaa"] * 2 and slower[0].is_displayed()
        assert len(driver.find_elements(By.CSS_SELECTOR, "g.failed")) == 2  # both panels of naive_row
        rows = driver.find_elements(By.CSS_SELECTOR, "#open-regressions tr.regression")
        assert len(rows) == 1 and "tuned" in rows[0].text and "--ncu-command=" in rows[0].text
        assert driver.find_element(By.ID, "verdict").text == "1 open regression(s)."
        assert driver.execute_script("return document.querySelectorAll('svg.plot circle.point').length") > 40
        driver.save_screenshot(str(tmp_path / "dashboard.png"))
        assert (tmp_path / "dashboard.png").stat().st_size > 10000
    finally:
        driver.quit()
