"""Pictures of a board: an isometric RGB image, a plain-text panel, a PNG writer.

This is the viewer, kept apart from the generator, the rules and the
per-agent views (``craft_env.core``). It reads a ``Structure`` (or its
int8 cell-value array, see ``craft_env.core.encoding``) and never changes it.
Only numpy and the standard library are used.

``render_rgb(structure)``
    An ``(H, W, 3)`` uint8 picture seen from the builder's side: the near
    row ``i = n-1`` is closest to the viewer, the far row ``i = 0`` at the
    back, column ``j = 0`` on the left; the camera stands a little to the
    right and above, so each block shows its top, front (near) and right
    faces, shaded light / medium / dark. The floor is an ``n x n`` grid of
    tiles on a thin slab. The two halves of a large block are drawn as one
    long box (no line between them). Polygons are rasterised with numpy
    half-plane tests over their bounding boxes into a palette-index canvas,
    2x supersampled by default. The image size depends only on
    ``(n, height, cell_px, margin)``, so the frames of one game all have the
    same size.

``render_panel(structure, title)`` / ``render_frame(board, title, target)``
    The env's ``rgb_array`` frame: ``render_rgb`` framed by a title line
    and the four seat labels drawn where the seats stand (D1 left, D2 far,
    D3 right, BUILDER near), in a 5x7 bitmap font (``envs.font``);
    ``render_frame`` puts a panel of the target to the right of the board's.

``render_ansi(structure, target_views, messages, title, target)``
    A text panel for terminals: the board layer by layer seen from above,
    a height map, each director's target wall (top layer first) and the
    last messages; with ``target`` the target's layers beside the board's.
    Plain text by default; ``color=True`` adds ANSI colours.

``write_png(path, rgb)`` / ``encode_png(rgb)``
    A minimal PNG encoder (zlib + struct), so pictures can be saved without
    Pillow.
"""

from __future__ import annotations

import functools
import math
import re
import struct
import textwrap
import zlib
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from craft_env.core.encoding import COLOUR_NAMES, COLOURS
from craft_env.core.views import DEFAULT_SEATS
from craft_env.envs.font import GLYPH_HEIGHT, draw_text, text_size

__all__ = [
    "BLOCK_RGB",
    "DEFAULT_CELL_PX",
    "PALETTE",
    "encode_png",
    "face_colours",
    "panel_origin",
    "project",
    "render_ansi",
    "render_frame",
    "render_panel",
    "render_rgb",
    "write_png",
]

# ----------------------------------------------------------------------------- palette

#: Base colour of each block colour, in ``COLOURS`` order (g b r y o).
BLOCK_RGB = np.array(
    [
        (62, 168, 74),  # green
        (48, 108, 214),  # blue
        (212, 44, 40),  # red
        (242, 204, 40),  # yellow
        (244, 138, 28),  # orange
    ],
    np.float64,
)
BLOCK_RGB.flags.writeable = False
BACKGROUND_RGB = (247, 247, 244)
OUTLINE_RGB = (38, 38, 44)
TILE_RGB = (220, 218, 208)
TILE_ALT_RGB = (206, 204, 194)
GRID_RGB = (146, 144, 136)
SLAB_FRONT_RGB = (172, 170, 160)
SLAB_RIGHT_RGB = (140, 138, 130)
HIGHLIGHT_RGB = (226, 0, 226)
HIGHLIGHT_TILE_RGB = (246, 176, 242)

DEFAULT_CELL_PX = 48
AZIMUTH_DEG = 28.0  # camera yaw to the builder's right (0: straight from the near side)
ELEVATION_DEG = 33.0  # camera pitch above the floor
SLAB_DEPTH = 0.14  # floor thickness, in block edges
LINE_WIDTH = 0.045  # outline width, in block edges (at least one output pixel)
_LIGHTEN_TOP = 0.18  # top faces: base colour mixed with this much white
_SHADE_FRONT = 0.84
_SHADE_RIGHT = 0.64

_TOP, _FRONT, _RIGHT = 0, 1, 2


def face_colours(colour: int) -> dict[str, tuple[int, int, int]]:
    """The three face shades (``"top"``, ``"front"``, ``"right"``) of block colour ``colour`` (0..4)."""
    base = BLOCK_RGB[colour]
    top = base + (255.0 - base) * _LIGHTEN_TOP

    def rgb(x: np.ndarray) -> tuple[int, int, int]:
        return tuple(int(round(v)) for v in x)  # type: ignore[return-value]

    return {"top": rgb(top), "front": rgb(base * _SHADE_FRONT), "right": rgb(base * _SHADE_RIGHT)}


# The picture is drawn as palette indices (one uint8 per pixel, so masked
# writes are cheap), then looked up and averaged down to RGB.
_BG, _OUTLINE, _TILE, _TILE_ALT, _GRID, _SLAB_FRONT, _SLAB_RIGHT, _HIGHLIGHT, _HIGHLIGHT_TILE = range(9)
_FACE_BASE = 9  # palette index of (colour c, face f) is _FACE_BASE + 3 * c + f
#: Every colour ``render_rgb`` paints before anti-aliasing (floor, outlines, 15 face shades).
PALETTE = np.array(
    [BACKGROUND_RGB, OUTLINE_RGB, TILE_RGB, TILE_ALT_RGB, GRID_RGB, SLAB_FRONT_RGB, SLAB_RIGHT_RGB,
     HIGHLIGHT_RGB, HIGHLIGHT_TILE_RGB]
    + [face_colours(c)[name] for c in range(5) for name in ("top", "front", "right")],
    np.uint8,
)
PALETTE.flags.writeable = False
_PALETTE16 = PALETTE.astype(np.uint16)


# ---------------------------------------------------------------------------- geometry


class _Camera:
    """Orthographic projection of world points ``(i, j, z)`` to pixel ``(x, y)`` (y down)."""

    def __init__(self, n: int, height: int, cell_px: float, scale: int, margin: float) -> None:
        s = float(cell_px) * scale
        yaw, pitch = math.radians(AZIMUTH_DEG), math.radians(ELEVATION_DEG)
        # screen directions of the world axes i (towards the builder), j (right), z (up)
        self.axes = np.array(
            [
                [-s * math.sin(yaw), s * math.cos(yaw) * math.sin(pitch)],
                [s * math.cos(yaw), s * math.sin(yaw) * math.sin(pitch)],
                [0.0, -s * math.cos(pitch)],
            ]
        )
        self.line = max(1.0, LINE_WIDTH * cell_px) * scale
        corners = np.array(
            [(i, j, z) for i in (0, n) for j in (0, n) for z in (-SLAB_DEPTH, height)], np.float64
        )
        xy = corners @ self.axes
        pad = margin * scale
        lo = np.floor(xy.min(0) - pad)
        hi = np.ceil(xy.max(0) + pad)
        self.offset = -lo
        # whole output pixels, so that the supersampled canvas downsamples exactly
        self.width = int(math.ceil((hi[0] - lo[0]) / scale)) * scale
        self.height = int(math.ceil((hi[1] - lo[1]) / scale)) * scale

    def __call__(self, points: Any) -> np.ndarray:
        return np.asarray(points, np.float64) @ self.axes + self.offset


@functools.lru_cache(maxsize=64)
def _camera(n: int, height: int, cell_px: float, scale: int, margin: float) -> _Camera:
    return _Camera(n, height, cell_px, scale, margin)


def _default_margin(cell_px: float) -> float:
    return max(4.0, 0.3 * cell_px)


def project(n: int, height: int, points: Any, *, cell_px: float | None = None,
            margin: float | None = None) -> np.ndarray:
    """Pixel ``(x, y)`` in ``render_rgb``'s output of world points ``(i, j, z)``.

    World units are block edges: cell ``(i, j)`` on layer ``z`` is the unit
    cube ``[i, i+1] x [j, j+1] x [z, z+1]``. Pixel ``(x, y)`` is the point
    ``image[int(y), int(x)]``. Useful to find a block in a picture (tests,
    annotations).
    """
    cell_px = float(DEFAULT_CELL_PX if cell_px is None else cell_px)
    margin = float(_default_margin(cell_px) if margin is None else margin)
    return _camera(n, height, cell_px, 1, margin)(points)


def _fill(canvas: np.ndarray, poly: np.ndarray, widths: Sequence[float], fill: int,
          line: int | None = None) -> None:
    """Rasterise the convex polygon ``poly`` (k, 2) into ``canvas`` with half-plane tests.

    A pixel (by its centre) belongs to the polygon when it is on the inner
    side of every edge. With a ``line`` colour, pixels within ``widths[e]``
    of edge ``e`` get ``line`` (an inner outline; width 0 = no outline on
    that edge) and the rest ``fill``. Only the polygon's bounding box is
    touched.
    """
    h, w = canvas.shape
    x0 = max(int(math.floor(poly[:, 0].min())), 0)
    x1 = min(int(math.ceil(poly[:, 0].max())) + 1, w)
    y0 = max(int(math.floor(poly[:, 1].min())), 0)
    y1 = min(int(math.ceil(poly[:, 1].max())) + 1, h)
    if x0 >= x1 or y0 >= y1:
        return
    nxt = np.roll(poly, -1, axis=0)
    edges = nxt - poly
    area = float(np.sum(poly[:, 0] * nxt[:, 1] - nxt[:, 0] * poly[:, 1]))
    if abs(area) < 1e-9:
        return
    length = np.hypot(edges[:, 0], edges[:, 1])
    length[length == 0] = 1.0
    sign = 1.0 if area > 0 else -1.0
    nx = -edges[:, 1] * sign / length  # inward unit normals
    ny = edges[:, 0] * sign / length
    xs = np.arange(x0, x1, dtype=np.float64) + 0.5
    ys = np.arange(y0, y1, dtype=np.float64) + 0.5
    # signed distance of pixel (y, x) to edge k, inside >= 0: along_y[k, y] + along_x[k, x]
    along_y = (ny[:, None] * (ys[None, :] - poly[:, 1:2])).astype(np.float32)
    along_x = (nx[:, None] * (xs[None, :] - poly[:, 0:1])).astype(np.float32)
    outline = line is not None and any(float(x) > 0 for x in widths)
    nearest = inner = None
    for k in range(len(poly)):
        d = along_y[k][:, None] + along_x[k][None, :]
        if nearest is None:
            nearest = d.copy() if outline else d
        else:
            np.minimum(nearest, d, out=nearest)
        if outline:
            d -= np.float32(widths[k])
            if inner is None:
                inner = d
            else:
                np.minimum(inner, d, out=inner)
    inside = nearest >= 0.0
    region = canvas[y0:y1, x0:x1]
    if not outline:
        region[inside] = fill
        return
    interior = inner >= 0.0
    region[inside & ~interior] = line
    region[interior] = fill


def _segment(canvas: np.ndarray, a: np.ndarray, b: np.ndarray, width: float, colour: int) -> None:
    """A straight line ``width`` pixels wide from ``a`` to ``b`` (a thin quad with square caps)."""
    a = np.asarray(a, np.float64)
    d = np.asarray(b, np.float64) - a
    length = float(np.hypot(d[0], d[1]))
    if length == 0:
        return
    d /= length
    normal = np.array([-d[1], d[0]]) * width / 2.0
    ext = d * width / 2.0
    b = a + d * length
    quad = np.array([a - ext + normal, b + ext + normal, b + ext - normal, a - ext - normal])
    _fill(canvas, quad, (0.0, 0.0, 0.0, 0.0), colour)


# The visible faces of the unit cube at (i, j, z): vertex offsets, listed so
# that edge e runs from vertex e to vertex e+1. _EDGE_SIDE names the
# neighbour across each edge; _INNER_EDGE marks edges shared with another
# visible face of the same cube (drawn half width, the other face draws the
# other half).
_FACE_VERTS = {
    _TOP: ((0, 0, 1), (0, 1, 1), (1, 1, 1), (1, 0, 1)),
    _FRONT: ((1, 0, 1), (1, 1, 1), (1, 1, 0), (1, 0, 0)),
    _RIGHT: ((0, 1, 1), (1, 1, 1), (1, 1, 0), (0, 1, 0)),
}
_FACE_ARRAYS = {face: np.array(verts, np.float64) for face, verts in _FACE_VERTS.items()}
_EDGE_SIDE = {
    _TOP: ("i-", "j+", "i+", "j-"),
    _FRONT: ("z+", "j+", "z-", "j-"),
    _RIGHT: ("z+", "i+", "z-", "i-"),
}
_INNER_EDGE = {
    _TOP: (False, True, True, False),
    _FRONT: (True, True, False, False),
    _RIGHT: (True, True, False, False),
}
_FACE_NORMAL = {_TOP: (0, 0, 1), _FRONT: (1, 0, 0), _RIGHT: (0, 1, 0)}
_DIRECTION_SIDE = ("i-", "i+", "j-", "j+")  # encoding's partner directions 0..3


# ---------------------------------------------------------------------------- floor


@functools.lru_cache(maxsize=32)
def _floor_canvas(n: int, height: int, cell_px: float, scale: int, margin: float,
                  highlighted: frozenset) -> np.ndarray:
    """The background, slab and floor tiles (read-only; copied by each render)."""
    cam = _camera(n, height, cell_px, scale, margin)
    canvas = np.full((cam.height, cam.width), _BG, np.uint8)
    line = cam.line
    slab_lo = np.array((0.0, 0.0, -SLAB_DEPTH))
    slab_size = np.array((n, n, SLAB_DEPTH), np.float64)
    for face, colour in ((_FRONT, _SLAB_FRONT), (_RIGHT, _SLAB_RIGHT)):
        _fill(canvas, cam(slab_lo + _FACE_ARRAYS[face] * slab_size), (0, line, line, line), colour, _OUTLINE)
    flat = _FACE_ARRAYS[_TOP] * (1.0, 1.0, 0.0)
    for i in range(n):
        for j in range(n):
            outer = {"i-": i == 0, "j+": j == n - 1, "i+": i == n - 1, "j-": j == 0}
            widths = [line if outer[side] else 0.4 * line for side in _EDGE_SIDE[_TOP]]
            if (i, j) in highlighted:
                colour = _HIGHLIGHT_TILE
            else:
                colour = _TILE if (i + j) % 2 == 0 else _TILE_ALT
            _fill(canvas, cam(flat + (i, j, 0.0)), widths, colour, _GRID)
    canvas.flags.writeable = False
    return canvas


# --------------------------------------------------------------------------- blocks


def _as_board(structure: Any) -> tuple[np.ndarray, int]:
    cells = np.asarray(getattr(structure, "array", structure))
    if cells.ndim != 2:
        raise ValueError(
            f"structure: expected a Structure or an (n*n, height) array, got shape {cells.shape}"
        )
    n = getattr(structure, "n", None) or int(round(math.sqrt(cells.shape[0])))
    if n * n != cells.shape[0] or n < 1 or cells.shape[1] < 1:
        raise ValueError(f"structure: shape {cells.shape} is not a square board with at least one layer")
    return cells, int(n)


def _parse_highlight(highlight: Any, n: int, height: int) -> list[tuple[int, int, int | None]]:
    if highlight is None:
        return []
    if (
        isinstance(highlight, (tuple, list))
        and len(highlight) in (2, 3)
        and all(isinstance(x, (int, np.integer)) for x in highlight)
    ):
        items: Iterable[Any] = [highlight]
    else:
        items = highlight
    out = []
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
            raise ValueError(f"highlight: expected (i, j) or (i, j, layer), got {item!r}")
        i, j = int(item[0]), int(item[1])
        if not (0 <= i < n and 0 <= j < n):
            raise ValueError(f"highlight: cell {(i, j)} is outside the {n}x{n} board")
        layer = None if len(item) == 2 else int(item[2])
        if layer is not None and not 0 <= layer < height:
            raise ValueError(f"highlight: layer {layer} is outside 0..{height - 1}")
        out.append((i, j, layer))
    return out


def _draw_blocks(canvas: np.ndarray, cam: _Camera, cells: np.ndarray, n: int) -> None:
    height = cells.shape[1]
    line = cam.line
    occupied = cells != 0
    # Painter's order. The camera looks along -(a, b, c) with a, b, c > 0, so
    # a unit cube can only hide cubes whose i + j + z is smaller, and cubes
    # with equal sums never overlap on screen.
    order = sorted(
        (i + j + z, i, j, z)
        for z in range(height) for i in range(n) for j in range(n) if occupied[i * n + j, z]
    )
    for _, i, j, z in order:
        value = int(cells[i * n + j, z])
        colour = value - 1 if value < 6 else (value - 6) // 4
        partner_side = _DIRECTION_SIDE[(value - 6) % 4] if value >= 6 else None
        base = np.array((i, j, z), np.float64)
        for face in (_TOP, _FRONT, _RIGHT):
            di, dj, dz = _FACE_NORMAL[face]
            ni, nj, nz = i + di, j + dj, z + dz
            if ni < n and nj < n and nz < height and occupied[ni * n + nj, nz]:
                continue  # touching a neighbour, which is drawn later and covers this face
            widths = [
                0.0 if side == partner_side  # the seam between the two halves of a large block
                else (0.5 * line if inner else line)
                for side, inner in zip(_EDGE_SIDE[face], _INNER_EDGE[face])
            ]
            _fill(canvas, cam(base + _FACE_ARRAYS[face]), widths, _FACE_BASE + 3 * colour + face, _OUTLINE)


def _draw_highlights(canvas: np.ndarray, cam: _Camera, cells: np.ndarray, n: int,
                     marks: list[tuple[int, int, int | None]], scale: int) -> None:
    width = max(2.0 * scale, 2.0 * cam.line)
    for i, j, layer in marks:
        if layer is None:
            stack = int(np.count_nonzero(cells[i * n + j]))
            lo, size = (i, j, 0.0), (1.0, 1.0, float(max(stack, 1)))
        else:
            lo, size = (i, j, float(layer)), (1.0, 1.0, 1.0)
        drawn: set = set()
        for face in (_TOP, _FRONT, _RIGHT):
            poly = cam(np.array(lo) + _FACE_ARRAYS[face] * np.array(size))
            for e in range(4):
                a, b = poly[e], poly[(e + 1) % 4]
                key = tuple(sorted((tuple(np.round(a, 3)), tuple(np.round(b, 3)))))
                if key not in drawn:
                    drawn.add(key)
                    _segment(canvas, a, b, width, _HIGHLIGHT)


def render_rgb(
    structure: Any,
    *,
    cell_px: float | None = None,
    highlight: Any = None,
    supersample: int = 2,
    margin: float | None = None,
) -> np.ndarray:
    """An isometric picture of ``structure`` as an ``(H, W, 3)`` uint8 array.

    ``structure`` is a ``Structure`` or its ``(n*n, height)`` cell-value
    array. ``cell_px`` is the length of a block edge in output pixels
    (default ``DEFAULT_CELL_PX``); ``margin`` the empty border in pixels.
    ``highlight`` marks cells: ``(i, j)`` tints the floor tile and outlines
    the whole stack (or the empty slot above the floor) in magenta, drawn
    on top so that hidden cells show too; ``(i, j, layer)`` outlines that
    one block slot; a list of these marks several. ``supersample`` renders
    at that many times the size and averages down (1: no anti-aliasing,
    only ``PALETTE`` colours, about 3x faster). Deterministic: the same
    arguments give the same bytes.
    """
    cells, n = _as_board(structure)
    height = cells.shape[1]
    cell_px = float(DEFAULT_CELL_PX if cell_px is None else cell_px)
    if not cell_px > 0:
        raise ValueError(f"cell_px: must be positive, got {cell_px!r}")
    scale = int(supersample)
    if scale < 1 or scale != supersample:
        raise ValueError(f"supersample: must be an int >= 1, got {supersample!r}")
    margin = float(_default_margin(cell_px) if margin is None else margin)
    marks = _parse_highlight(highlight, n, height)
    cam = _camera(n, height, cell_px, scale, margin)
    canvas = _floor_canvas(n, height, cell_px, scale, margin, frozenset((i, j) for i, j, _ in marks)).copy()
    _draw_blocks(canvas, cam, cells, n)
    _draw_highlights(canvas, cam, cells, n, marks, scale)
    if scale == 1:
        return np.take(PALETTE, canvas, axis=0)
    rgb = np.take(_PALETTE16, canvas, axis=0)
    acc = rgb[0::scale, 0::scale].copy()
    for dy in range(scale):
        for dx in range(scale):
            if dy or dx:
                acc += rgb[dy::scale, dx::scale]
    count = scale * scale
    return ((acc + count // 2) // count).astype(np.uint8)


# ---------------------------------------------------------------------------- frames

#: Seat labels of a panel (the default seats) and the floor point of the side each seat stands
#: at, as fractions of ``(n, n)`` in ``(i, j)``: D1 left (j = 0), D2 far (i = 0), D3 right
#: (j = n), the builder near (i = n); a seated D0 shares the builder's side (``seat_labels``).
SEAT_LABELS = (("D1", (0.5, 0.0)), ("D2", (0.0, 0.5)), ("D3", (0.5, 1.0)), ("BUILDER", (1.0, 0.5)))


def seat_labels(seats: Sequence[str] = DEFAULT_SEATS) -> tuple[tuple[str, tuple[float, float]], ...]:
    """``SEAT_LABELS`` for the directors ``seats``: the seated sides, and ``BUILDER D0`` when D0 sits near."""
    sides = [(label, at) for label, at in SEAT_LABELS[:-1] if label in seats]
    return (*sides, ("BUILDER D0" if "D0" in seats else "BUILDER", SEAT_LABELS[-1][1]))


def _font_scale(cell_px: float) -> int:
    return max(1, int(round(cell_px / 24.0)))


def panel_origin(cell_px: float | None = None) -> tuple[int, int]:
    """``(row, column)`` of ``render_rgb``'s picture inside ``render_panel``'s (same ``cell_px``)."""
    cell_px = float(DEFAULT_CELL_PX if cell_px is None else cell_px)
    scale = _font_scale(cell_px)
    gap = 2 * scale
    line = GLYPH_HEIGHT * scale
    side = text_size("D1", scale)[1] + 2 * gap
    return 2 * line + 3 * gap, side


def render_panel(structure: Any, title: str = "", *, cell_px: float | None = None,
                 supersample: int = 2, seats: Sequence[str] = DEFAULT_SEATS) -> np.ndarray:
    """``render_rgb(structure)`` with ``title`` above it and the seat labels around it.

    The picture sits at ``panel_origin(cell_px)`` on a background border:
    the title on the top line, D2 on the next line above the far side, D1
    and D3 in the side strips level with the middle of their floor edges,
    BUILDER below the near side (labels of the seated ``seats`` only). The
    size depends only on the board size and ``cell_px``.
    """
    picture = render_rgb(structure, cell_px=cell_px, supersample=supersample)
    cells, n = _as_board(structure)
    cell_px = float(DEFAULT_CELL_PX if cell_px is None else cell_px)
    scale = _font_scale(cell_px)
    gap, line = 2 * scale, GLYPH_HEIGHT * scale
    top, side = panel_origin(cell_px)
    h, w = picture.shape[:2]
    panel = np.empty((top + h + line + 2 * gap, w + 2 * side, 3), np.uint8)
    panel[:] = BACKGROUND_RGB
    panel[top:top + h, side:side + w] = picture
    draw_text(panel, title, gap, gap, OUTLINE_RGB, scale)
    for label, (fi, fj) in seat_labels(seats):
        x, y = project(n, cells.shape[1], (fi * n, fj * n, 0.0), cell_px=cell_px) + (side, top)
        width = text_size(label, scale)[1]
        if label == "D1":
            at = (side - gap - width, int(y) - line // 2)
        elif label == "D3":
            at = (side + w + gap, int(y) - line // 2)
        else:
            x = min(max(int(x) - width // 2, 0), panel.shape[1] - width)
            at = (x, top - gap - line) if label == "D2" else (x, top + h + gap)
        draw_text(panel, label, at[0], at[1], OUTLINE_RGB, scale)
    return panel


def render_frame(board: Any, title: str = "", target: Any = None, *, cell_px: float | None = None,
                 supersample: int = 2, seats: Sequence[str] = DEFAULT_SEATS) -> np.ndarray:
    """The board's ``render_panel``; with ``target``, the target's panel (titled TARGET) to its right."""
    frame = render_panel(board, title, cell_px=cell_px, supersample=supersample, seats=seats)
    if target is None:
        return frame
    return np.concatenate(
        [frame, render_panel(target, "TARGET", cell_px=cell_px, supersample=supersample, seats=seats)], axis=1
    )


# ------------------------------------------------------------------------------ text

_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
_ANSI_COLOUR = {"g": "32", "b": "34", "r": "31", "y": "33", "o": "38;5;208"}
_SEAT_SIDES = {
    "D0": "near side, row i=n-1",
    "D1": "left, column j=0",
    "D2": "far side, row i=0",
    "D3": "right, column j=n-1",
}


def _vlen(text: str) -> int:
    return len(_ANSI_RE.sub("", text))


def _paint(token: str, color: bool) -> str:
    if not color or token[:1] not in _ANSI_COLOUR:
        return token
    return f"\x1b[{_ANSI_COLOUR[token[0]]}m{token}\x1b[0m"


def _code(value: int) -> str:
    if value == 0:
        return ".."
    colour = value - 1 if value < 6 else (value - 6) // 4
    return COLOURS[colour] + ("l" if value >= 6 else "s")


def _layer_panel(cells: np.ndarray, n: int, level: int, color: bool, link_rows: list[bool]) -> list[str]:
    lines = [f"layer {level}"]
    for i in range(n):
        row = links = ""
        for j in range(n):
            value = int(cells[i * n + j, level])
            row += _paint(_code(value), color)
            links += "||" if value >= 6 and (value - 6) % 4 == 1 else "  "
            if j + 1 < n:
                row += "==" if value >= 6 and (value - 6) % 4 == 3 else "  "
                links += "  "
        lines.append(row)
        if i + 1 < n and link_rows[i]:
            lines.append(links)
    return lines


def _height_panel(cells: np.ndarray, n: int, link_rows: list[bool]) -> list[str]:
    heights = np.count_nonzero(cells, axis=1).reshape(n, n)
    lines = ["heights"]
    for i in range(n):
        lines.append("  ".join(f"{int(h):>2}" for h in heights[i]))
        if i + 1 < n and link_rows[i]:
            lines.append("")
    return lines


def _colour_letter(name: Any) -> str | None:
    if name is None:
        return None
    text = str(name).strip().lower()
    if not text or text in ("none", "empty"):
        return None
    if text in COLOUR_NAMES:
        return COLOURS[COLOUR_NAMES.index(text)]
    return text[0] if text[0] in COLOURS else "?"


def _wall_panel(seat: str, view: Mapping[str, Any], color: bool) -> list[str]:
    layers = sorted(
        (int(key[4:]), row)
        for key, row in view.items()
        if isinstance(key, str) and key.startswith("row_") and key[4:].isdigit()
        and isinstance(row, (list, tuple))
    )
    width = max((len(row) for _, row in layers), default=0)
    side = _SEAT_SIDES.get(seat)
    lines = [f"{seat} wall" + (f" ({side})" if side else "")]
    for level, row in reversed(layers):
        slots: list[tuple[str | None, int]] = []
        for slot in row:
            slot = slot if isinstance(slot, Mapping) else {}
            letter = _colour_letter(slot.get("color", slot.get("colour")))
            slots.append((letter, 2 if slot.get("size") == 2 else 1) if letter else (None, 0))
        slots += [(None, 0)] * (width - len(slots))
        text = f"L{level}  "
        open_pair = False  # consecutive size-2 slots of one colour pair up left to right
        for k, (letter, size) in enumerate(slots):
            text += _paint(".." if letter is None else letter + ("l" if size == 2 else "s"), color)
            if k + 1 < len(slots):
                joined = size == 2 and not open_pair and slots[k + 1] == (letter, 2)
                open_pair = joined
                text += "==" if joined else "  "
        lines.append(text)
    slots_axis = "".join(f"{k:<4}" for k in range(width)).rstrip()
    lines.append(f"    {slots_axis}  <- left to right from the seat")
    return lines


def _side_by_side(panels: list[list[str]], width: int, gap: int = 4) -> list[str]:
    """Lay panels out left to right, starting a new row of panels past ``width`` columns."""
    out: list[str] = []
    rows: list[list[list[str]]] = [[]]
    used = 0
    for panel in panels:
        w = max(_vlen(line) for line in panel)
        if rows[-1] and used + gap + w > width:
            rows.append([])
            used = 0
        used += (gap if rows[-1] else 0) + w
        rows[-1].append(panel)
    for row in rows:
        widths = [max(_vlen(line) for line in panel) for panel in row]
        for k in range(max(len(panel) for panel in row)):
            parts = []
            for panel, w in zip(row, widths):
                line = panel[k] if k < len(panel) else ""
                parts.append(line + " " * (w - _vlen(line)))
            out.append((" " * gap).join(parts).rstrip())
        out.append("")
    return out


def _message_lines(messages: list[Any], max_messages: int, width: int) -> list[str]:
    """The last ``max_messages`` of ``messages`` (pairs or ``speaker``/``text`` dicts), wrapped at ``width``."""
    shown = messages[-max_messages:] if max_messages > 0 else []
    skipped = len(shown) < len(messages)
    out = ["messages" + (f" (last {len(shown)} of {len(messages)})" if skipped else "")]
    for message in shown:
        if isinstance(message, Mapping):
            speaker, text = message.get("speaker", "?"), message.get("text", "")
        elif isinstance(message, (tuple, list)) and len(message) == 2:
            speaker, text = message
        else:
            speaker, text = "?", message
        prefix = f"  {speaker}: "
        body = " ".join(str(text).split()) or "(nothing)"
        wrapped = textwrap.wrap(body, width=max(20, width - len(prefix)))
        out.append(prefix + wrapped[0])
        out += [" " * len(prefix) + part for part in wrapped[1:]]
    return out


def render_ansi(
    structure: Any,
    target_views: Mapping[str, Mapping[str, Any]] | None = None,
    messages: Sequence[Any] | None = None,
    title: str | None = None,
    target: Any = None,
    *,
    max_messages: int = 8,
    color: bool = False,
    width: int = 100,
) -> str:
    """A text drawing of the board, the directors' target walls and the last messages.

    The board is drawn layer by layer as seen from above (far row ``i = 0``
    at the top, the builder's near row at the bottom, column ``j = 0`` on
    the left), with the same tokens as ``str(structure)``: a block code
    (``gs``, ``rl``, ...) or ``..``; ``==`` joins the halves of a large block
    along a row, ``||`` across rows; then a height map. ``target_views`` is
    ``{seat: {"row_k": [{"color", "size"}, ...]}}`` (``director_views``):
    each wall is drawn top layer first, slots left to right from the seat,
    ``xs`` for a slot of colour ``x`` that looks size 1, ``xl==xl`` for a
    size-2 pair. ``messages`` is a list of ``(speaker, text)`` pairs (or
    dicts with ``speaker``/``text``); the last ``max_messages`` are shown.
    ``target`` (a ``Structure`` or cell array of the board's size) adds its
    layers, titled ``target k``, after the board's height map. Panels wrap
    at ``width`` columns; ``color=True`` wraps block codes in ANSI colour
    escapes.
    """
    cells, n = _as_board(structure)
    height = cells.shape[1]
    out: list[str] = []
    if title:
        out += [f"=== {title} ===", ""]
    goal = None
    if target is not None:
        goal = _as_board(target)[0]
        if goal.shape != cells.shape:
            raise ValueError(f"target: shape {goal.shape} differs from the board's {cells.shape}")
    # rows of '||' links, shared by the board and the target so that their rows line up
    downward = np.zeros(n * n, bool)
    for drawn in (cells, goal):
        if drawn is not None:
            downward |= ((drawn >= 6) & ((drawn.astype(np.int16) - 6) % 4 == 1)).any(axis=1)
    link_rows = [bool(downward[i * n:(i + 1) * n].any()) for i in range(n - 1)]
    blocks = int(np.count_nonzero(cells)) - int(np.count_nonzero(cells >= 6)) // 2
    out += textwrap.wrap(
        f"board {n}x{n}x{height}, {blocks} block{'s' if blocks != 1 else ''} (from above: far side / D2 "
        "at the top, builder at the bottom, D1 left, D3 right)",
        width=max(20, width),
    )
    panels = [_layer_panel(cells, n, level, color, link_rows) for level in range(height)]
    panels.append(_height_panel(cells, n, link_rows))
    if goal is not None:
        for level in range(height):
            layer = _layer_panel(goal, n, level, color, link_rows)
            panels.append([f"target {level}", *layer[1:]])
    out += _side_by_side(panels, width)
    if target_views:
        out.append("target walls (top layer first; xl==xl: a large block seen whole on the wall)")
        out += _side_by_side(
            [_wall_panel(str(seat), view or {}, color) for seat, view in target_views.items()], width
        )
    if messages:
        out += _message_lines(list(messages), max_messages, width)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------- PNG

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def encode_png(image: Any, compression: int = 6) -> bytes:
    """PNG bytes of an ``(H, W)`` grey, ``(H, W, 3)`` RGB or ``(H, W, 4)`` RGBA uint8 array.

    Floats are read as 0..1. Every scanline uses filter 0; the output is
    deterministic.
    """
    a = np.asarray(image)
    if a.dtype != np.uint8:
        if a.dtype.kind == "f":
            a = np.round(np.clip(a, 0.0, 1.0) * 255.0)
        elif a.dtype.kind in "iub":
            a = np.clip(a, 0, 255)
        else:
            raise ValueError(f"image: unsupported dtype {a.dtype}")
        a = a.astype(np.uint8)
    if a.ndim == 2:
        colour_type, channels = 0, 1
    elif a.ndim == 3 and a.shape[2] in (3, 4):
        colour_type, channels = (2, 3) if a.shape[2] == 3 else (6, 4)
    else:
        raise ValueError(f"image: expected shape (H, W), (H, W, 3) or (H, W, 4), got {a.shape}")
    h, w = a.shape[:2]
    if h == 0 or w == 0:
        raise ValueError(f"image: empty image of shape {a.shape}")
    raw = np.zeros((h, 1 + w * channels), np.uint8)  # column 0: filter type "none"
    raw[:, 1:] = a.reshape(h, w * channels)
    header = struct.pack(">IIBBBBB", w, h, 8, colour_type, 0, 0, 0)
    return (
        PNG_SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw.tobytes(), compression))
        + _chunk(b"IEND", b"")
    )


def write_png(path: str | Path, rgb: Any) -> Path:
    """Save ``rgb`` (see ``encode_png``) as a PNG file at ``path``; returns the path."""
    path = Path(path)
    path.write_bytes(encode_png(rgb))
    return path
