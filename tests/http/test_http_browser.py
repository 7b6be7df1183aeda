"""The web app in a real headless Chromium, against a server on a loopback port.

As a person would use it: load the page, search, read an explained hit, draw
the result's subgraph, open a node, look at the timeline, forget a turn and see
it gone. Needs Debian's ``chromium`` and ``chromium-driver``; skips otherwise.
With ``LABILE_WEBAPP_SCREENSHOTS=DIR`` the views are saved there as PNGs (the
docs' pictures: ``docs/img/web-app-*.png``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from http_helpers import DEMO, IN_MEMORY, lancedb_config, live_server
from webdriver import Browser, browser_missing, free_port

from extras import REQUIRE
from labile import Memory
from labile_mcp.convert import messages_to_observations

pytestmark = [pytest.mark.extras,
              pytest.mark.skipif(browser_missing() is not None and not REQUIRE,
                                 reason=str(browser_missing()))]


@pytest.fixture
def browser() -> Iterator[Browser]:
    b = Browser(width=1280, height=860)
    yield b
    b.close()


def _shot(b: Browser, name: str, tmp_path: Path) -> None:
    png = b.screenshot()
    assert png.startswith(b"\x89PNG") and len(png) > 5_000  # something was drawn
    where = os.environ.get("LABILE_WEBAPP_SCREENSHOTS")
    (Path(where) if where else tmp_path).joinpath(f"web-app-{name}.png").write_bytes(png)


def _wait(condition: object, what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not callable(condition) or not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.1)


def test_search_draw_open_and_forget_in_a_real_browser(browser: Browser, tmp_path: Path) -> None:
    memory = Memory.open(lancedb_config(tmp_path))
    memory.add(messages_to_observations(DEMO, now=datetime.now(UTC)), namespace="maya")
    with live_server(memory, ("maya",), free_port()) as url:
        b = browser
        b.get(url + "/")
        option = b.wait_for("#ns-select option")[0]
        assert b.text(option).startswith("maya (6 turns")

        b.type(b.find_all("#q")[0], "Where did Maya move?")
        b.click(b.find_all("#search-btn")[0])
        hits = b.wait_for(".hit")
        first = b.text(hits[0])
        assert "said 2024-03-02" in b.execute("return document.querySelector('#hits').innerText")
        assert "why:" in first and "current" in first
        assert "Lisbon" in b.execute("return document.querySelector('#hits').innerText")
        _shot(b, "search", tmp_path)

        b.click(b.find_all("#show-subgraph")[0])
        b.wait_for("#graph circle.hit-node")
        assert len(b.find_all("#graph circle")) >= len(hits)
        assert b.find_all("#graph line.edge")
        outside = b.execute(
            "const box = document.querySelector('#graph').viewBox.baseVal;"
            "return [...document.querySelectorAll('#graph circle')].filter(c => {"
            " const x = +c.getAttribute('cx'), y = +c.getAttribute('cy');"
            " return !(x >= 0 && x <= box.width && y >= 0 && y <= box.height); }).length")
        assert outside == 0  # every node is drawn inside the picture
        b.execute("document.querySelector('#graph circle.hit-node')"
                  ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
        b.wait_for("#detail h3")
        assert "Source turns" in b.text(b.find_all("#detail")[0])
        _shot(b, "graph", tmp_path)
        b.execute("[...document.querySelectorAll('#detail button')].at(-1).click()")
        _wait(lambda: "Neighbourhood" in b.text(b.find_all("#graph-title")[0]),
              "the neighbourhood was not drawn")
        b.wait_for("#graph circle", count=4)
        _shot(b, "neighbourhood", tmp_path)

        b.click(b.find_all("button[data-view=timeline]")[0])
        b.wait_for("#timeline table")
        assert "s1" in b.text(b.find_all("#timeline")[0])
        _shot(b, "timeline", tmp_path)

        b.click(b.find_all("button[data-view=search]")[0])
        page = "return document.querySelector('#hits').innerText"
        assert "[t1]" in b.execute(page)
        # The forget button of the hit that cites t1.
        b.execute("[...document.querySelectorAll('.hit')].find(h => h.innerText.includes('[t1]'))"
                  ".querySelector('.forget-btn').click()")
        assert "cannot be undone" in b.accept_alert()
        _wait(lambda: "forgotten" in b.script_text(), "the forget was not reported")
        _wait(lambda: "[t1]" not in b.execute(page), "the forgotten turn is still shown")
    assert memory.get("maya", ["t1"]) == []
    memory.close()


def test_a_200_node_neighbourhood_is_drawn_inside_the_picture(browser: Browser,
                                                              tmp_path: Path) -> None:
    from labile_bench.mcp_serve import corpus
    from labile_io.graphs import neighbourhood

    memory = Memory.open(IN_MEMORY)  # the other test uses a store on disk; this one is big
    memory.add(corpus(200)[0], namespace="maya")
    hub = max(memory.store.iter_nodes("maya"),
              key=lambda n: len(memory.store.edges_of("maya", [n.id], direction="both")))
    expected = len(neighbourhood(memory.store, "maya", hub.id, hops=3, limit=200).nodes)
    assert expected >= 150
    with live_server(memory, ("maya",), free_port()) as url:
        b = browser
        b.get(url + "/")
        b.wait_for("#ns-select option")
        b.execute("api(`/api/node/neighbourhood?id=${encodeURIComponent(arguments[0])}"
                  "&hops=3&limit=200`).then((g) => drawGraph(g, 'hub'))", hub.id)
        assert len(b.wait_for("#graph circle", count=expected)) == expected
        outside = b.execute(
            "const box = document.querySelector('#graph').viewBox.baseVal;"
            "return [...document.querySelectorAll('#graph circle')].filter(c => {"
            " const x = +c.getAttribute('cx'), y = +c.getAttribute('cy');"
            " return !(x >= 0 && x <= box.width && y >= 0 && y <= box.height); }).length")
        assert outside == 0
        # Past 60 nodes only the centre keeps its label; the others show theirs on hover.
        assert len(b.find_all("#graph text.node-label")) == 1
        _shot(b, "200-nodes", tmp_path)
    memory.close()
