"""The leaderboard as one self-contained HTML file, under the replay page's rules (docs/leaderboard.md).

The page is ``assets/leaderboard.html`` with the board's data as one JSON
block, the style, and one script: the drawing the replay page uses
(``replay.drawing_script``) followed by ``assets/leaderboard.js``.
``replay.page_html`` fills it in: a Content-Security-Policy with
``default-src 'none'`` that runs only that script and that style (by
hash), nothing fetched, every text put in by ``textContent``; it works
from ``file://``.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from craft_env.eval.replay.page import drawing_script, page_html


def _asset(name: str) -> str:
    return (resources.files("craft_env.eval.leaderboard") / "assets" / name).read_text(encoding="utf-8")


def render_board(data: dict[str, Any]) -> str:
    """The whole page for ``board.build_board``'s data."""
    script = drawing_script() + _asset("leaderboard.js")
    return page_html(_asset("leaderboard.html"), _asset("leaderboard.css"), script, data, str(data["title"]))
