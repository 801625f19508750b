"""The viewer: isometric RGB pictures, the text panel and the PNG writer."""

from __future__ import annotations

import colorsys
import re
import struct
import zlib

import numpy as np
import pytest

from craft_env import Structure, generate_structure
from craft_env.core.views import director_views
from craft_env.envs.font import GLYPHS, draw_text, text_mask, text_size
from craft_env.envs.render import (
    BACKGROUND_RGB,
    PALETTE,
    encode_png,
    face_colours,
    panel_origin,
    project,
    render_ansi,
    render_frame,
    render_panel,
    render_rgb,
    write_png,
)

FLOOR_COLOURS = {tuple(int(x) for x in PALETTE[k]) for k in range(7)}  # background, outline, floor
FACES = ("top", "front", "right")

ONE_RED = Structure.from_ascii(
    """
    layer 0
      ..  ..  ..
      ..  rs  ..
      ..  ..  ..
    """
)

NO_RED = Structure.from_ascii(
    """
    layer 0
      gs  bs  ys
      os  gl==gl
      bl==bl  os
    layer 1
      ys  os  gl
              ||
      ..  bs  gl
      ol==ol  ys
    layer 2
      ..  ..  ys
      ..  ..  ..
      ..  ..  ..
    """
)


def colours_of(image: np.ndarray) -> set[tuple[int, int, int]]:
    return {tuple(int(x) for x in c) for c in np.unique(image.reshape(-1, 3), axis=0)}


def block_pixels(image: np.ndarray) -> int:
    """Pixels that are neither background nor floor (exact colours: render with supersample=1)."""
    floor = np.array(sorted(FLOOR_COLOURS), np.uint8)
    is_floor = (image[:, :, None, :] == floor[None, None, :, :]).all(-1).any(-1)
    return int((~is_floor).sum())


def reddish(image: np.ndarray) -> int:
    """Pixels of a saturated red hue (not orange, not magenta)."""
    rgb = image.reshape(-1, 3).astype(np.float64) / 255.0
    count = 0
    for r, g, b in np.unique(rgb, axis=0):
        h, s, v = colorsys.rgb_to_hsv(r, g, b)
        if s > 0.5 and v > 0.3 and (h < 12 / 360 or h > 348 / 360):
            count += int(((rgb == (r, g, b)).all(1)).sum())
    return count


def pixel(image: np.ndarray, structure: Structure, point, **kwargs) -> tuple[int, int, int]:
    x, y = project(structure.n, structure.height, np.array(point, float), **kwargs)
    return tuple(int(c) for c in image[int(y), int(x)])


# ------------------------------------------------------------------------- render_rgb


def test_shape_dtype_and_size_depends_only_on_the_board_size():
    image = render_rgb(generate_structure(0))
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape == render_rgb(Structure.empty(3, 3)).shape
    bigger = render_rgb(generate_structure(0), cell_px=96)
    assert bigger.shape[0] > 1.8 * image.shape[0] and bigger.shape[1] > 1.8 * image.shape[1]


def test_deterministic_and_accepts_the_raw_array():
    structure = generate_structure(11)
    first = render_rgb(structure)
    assert np.array_equal(first, render_rgb(structure))
    assert np.array_equal(first, render_rgb(np.array(structure.array)))
    assert np.array_equal(render_rgb(structure, supersample=1), render_rgb(structure.array, supersample=1))


def test_empty_board_draws_only_the_floor():
    image = render_rgb(Structure.empty(3, 3), supersample=1)
    assert colours_of(image) <= FLOOR_COLOURS
    assert len(colours_of(image)) >= 4  # background, tiles, grid lines, slab
    smooth = render_rgb(Structure.empty(3, 3))
    rgb = smooth.reshape(-1, 3).astype(int)
    assert (rgb.max(1) - rgb.min(1)).max() < 30  # nothing saturated: no block colour anywhere


def test_red_block_gives_red_pixels_and_none_without_red():
    assert reddish(render_rgb(ONE_RED)) > 200
    assert reddish(render_rgb(NO_RED)) == 0
    assert reddish(render_rgb(Structure.empty(3, 3))) == 0
    exact = colours_of(render_rgb(ONE_RED, supersample=1))
    assert set(face_colours(2).values()) <= exact  # red top, front and right faces all show


def test_faces_show_the_right_colours_from_the_builders_side():
    """Top faces of the top layer, front faces of the near row, right faces of column n-1."""
    structure = generate_structure(0)
    n, cells = structure.n, structure.array
    image = render_rgb(structure, supersample=1)
    assert structure.heights().max() == 3
    checked = 0
    for i in range(n):
        for j in range(n):
            stack = structure.stack(i, j)
            if len(stack) == 3:
                colour = "gbryo".index(stack[-1][0])
                assert pixel(image, structure, (i + 0.5, j + 0.5, 3)) == face_colours(colour)["top"]
                checked += 1
            for z, code in enumerate(stack):
                colour = "gbryo".index(code[0])
                if i == n - 1:
                    assert pixel(image, structure, (n, j + 0.5, z + 0.5)) == face_colours(colour)["front"]
                    checked += 1
                if j == n - 1:
                    assert pixel(image, structure, (i + 0.5, n, z + 0.5)) == face_colours(colour)["right"]
                    checked += 1
    assert checked >= 20 and cells.any()
    # orientation: column j grows to the right, the near row is lower on screen, layers go up
    left, right = project(3, 3, [(1, 0, 0), (1, 3, 0)])
    far, near = project(3, 3, [(0, 1, 0), (3, 1, 0)])
    low, high = project(3, 3, [(1, 1, 0), (1, 1, 3)])
    assert left[0] < right[0] and far[1] < near[1] and high[1] < low[1]


ROW_DOMINO = """
layer 0
  ..  ..  ..
  ..  ..  ..
  bl==bl  ..
"""
ROW_PAIR = ROW_DOMINO.replace("bl==bl", "bs  bs")
COLUMN_DOMINO = """
layer 0
  ..  ..  rl
          ||
  ..  ..  rl
  ..  ..  ..
"""
COLUMN_PAIR = COLUMN_DOMINO.replace("rl", "rs").replace("||", "  ")
SPREAD = np.linspace(0.2, 0.8, 7)


@pytest.mark.parametrize(
    "joined, apart, seam",
    [
        # along a row: the seam crosses the top and the front face at j = 1
        (ROW_DOMINO, ROW_PAIR, [(2 + t, 1, 1) for t in SPREAD] + [(3, 1, z) for z in SPREAD]),
        # across rows: the seam crosses the top and the right face at i = 1
        (COLUMN_DOMINO, COLUMN_PAIR, [(1, 2 + t, 1) for t in SPREAD] + [(1, 3, z) for z in SPREAD]),
    ],
    ids=["row", "column"],
)
def test_large_block_is_one_box_without_a_seam(joined, apart, seam):
    big, small = Structure.from_ascii(joined), Structure.from_ascii(apart)
    assert big.num_blocks == 1 and small.num_blocks == 2 and big.num_entries == small.num_entries == 2
    outline = tuple(int(x) for x in PALETTE[1])
    block_shades = {face_colours(c)[f] for c in range(5) for f in FACES}
    for structure, expect_line in ((big, False), (small, True)):
        image = render_rgb(structure, supersample=1)
        lines = 0
        for point in seam:
            x, y = project(3, 3, np.array(point, float))
            around = image[int(y) - 1:int(y) + 2, int(x) - 1:int(x) + 2].reshape(-1, 3)
            patch = {tuple(int(c) for c in p) for p in around}
            if outline in patch:
                lines += 1
            elif not expect_line:
                assert patch <= block_shades, f"not block-coloured at {point}: {patch}"
        assert lines == (len(seam) if expect_line else 0), (structure, lines)


def test_more_blocks_more_block_pixels():
    structure = generate_structure(0)
    counts = []
    for top in range(structure.height + 1):
        cells = np.array(structure.array)
        cells[:, top:] = 0  # the bottom `top` layers (large blocks never straddle layers)
        counts.append(block_pixels(render_rgb(Structure.from_array(cells), supersample=1)))
    assert counts[0] == 0
    assert all(a < b for a, b in zip(counts, counts[1:])), counts


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("height", range(1, 6))
def test_every_board_size(n, height):
    structure = generate_structure(5, n=n, height=height)
    image = render_rgb(structure, cell_px=20)
    assert image.dtype == np.uint8 and image.shape[2] == 3
    assert image.shape == render_rgb(Structure.empty(n, height), cell_px=20).shape
    exact = render_rgb(structure, cell_px=20, supersample=1)
    assert block_pixels(exact) > 0
    # every corner of the board box lies inside the picture
    corners = [(i, j, z) for i in (0, n) for j in (0, n) for z in (0, height)]
    xy = project(n, height, corners, cell_px=20)
    assert (xy >= 0).all() and (xy[:, 0] < image.shape[1]).all() and (xy[:, 1] < image.shape[0]).all()


def test_highlight():
    structure = generate_structure(0)
    plain = render_rgb(structure)
    magenta = tuple(int(x) for x in PALETTE[7])
    for mark in [(1, 1), (2, 2, 1), [(0, 0), (2, 1, 0)]]:
        image = render_rgb(structure, highlight=mark, supersample=1)
        assert magenta in colours_of(image)
        assert not np.array_equal(render_rgb(structure, highlight=mark), plain)
    empty = render_rgb(Structure.empty(3, 3), highlight=(2, 0), supersample=1)
    tile = tuple(int(x) for x in PALETTE[8])
    assert pixel(empty, Structure.empty(3, 3), (2.5, 0.5, 0)) == tile
    for bad in [(3, 0), (0, 0, 3), "x", [(1,)]]:
        with pytest.raises(ValueError):
            render_rgb(structure, highlight=bad)


def test_bad_arguments():
    with pytest.raises(ValueError):
        render_rgb(generate_structure(0), cell_px=0)
    with pytest.raises(ValueError):
        render_rgb(generate_structure(0), supersample=0)
    with pytest.raises(ValueError):
        render_rgb(np.zeros((8, 3), np.int8))


def test_ansi_shows_board_walls_and_messages():
    structure = generate_structure(0)
    messages = [("D1", "put a blue block on the left"), ("D2", "no, red first"), ("Builder", "ok, red it is")]
    text = render_ansi(structure, director_views(structure), messages, title="game 0, turn 3")
    assert "game 0, turn 3" in text
    for code in {c for stack in structure.stacks().values() for c in stack}:
        assert code in text
    for speaker, message in messages:
        assert f"{speaker}: {message}" in text
    for seat in ("D1", "D2", "D3"):
        assert f"{seat} wall" in text
    # the layers appear the way str(structure) draws them
    assert "rs  os  bs" in text and "yl==yl  gl" in text
    # D1 sees column 0: on layer 2, yl (its partner is off the wall: looks small), then a vertical bl pair
    assert re.search(r"L2\s+ys  bl==bl", text)
    assert "\x1b[" not in text


def test_ansi_keeps_the_last_messages_and_colours_on_request():
    structure = generate_structure(3)
    messages = [("D1", f"message number {k}") for k in range(12)]
    text = render_ansi(structure, messages=messages, max_messages=4)
    assert "message number 11" in text and "message number 8" in text
    assert "message number 7" not in text
    assert "last 4 of 12" in text
    coloured = render_ansi(structure, director_views(structure), messages, color=True)
    assert "\x1b[31m" in coloured or "\x1b[32m" in coloured
    plain = render_ansi(structure, director_views(structure), messages)
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


def test_ansi_other_sizes_and_dict_messages():
    structure = generate_structure(2, n=5, height=4)
    views = director_views(structure, seats=("D1", "D2", "D3", "D0"))
    text = render_ansi(structure, views, [{"speaker": "D0", "text": "hello"}], width=80)
    assert "D0 wall" in text and "D0: hello" in text and "layer 3" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    assert render_ansi(Structure.empty(2, 1)).startswith("board 2x2x1, 0 blocks")


def test_ansi_target_beside_the_board():
    board, target = generate_structure(1), generate_structure(4)
    plain = render_ansi(board, director_views(target))
    text = render_ansi(board, director_views(target), target=target)
    assert "target 0" not in plain and "target 2" in text
    header = next(line for line in text.splitlines() if line.startswith("layer 0"))
    assert header.index("heights") < header.index("target 0") < header.index("target 2")
    # the target panels draw each layer's rows as str(target) does, after the board's panels
    lines = text.splitlines()
    start = lines.index(header)
    layers = str(target).split("layer ")[1:]
    for level, layer in enumerate(layers):
        column = header.index(f"target {level}")
        rows = [row.strip() for row in layer.splitlines()[1:] if row.strip() and "||" not in row]
        drawn = [line[column:column + 10].strip() for line in lines[start + 1:start + 6]]
        assert [row for row in drawn if row and "||" not in row] == rows
    with pytest.raises(ValueError, match="target"):
        render_ansi(board, target=Structure.empty(4, 3))


# ----------------------------------------------------------------------- font, frames


def test_font_glyphs_are_distinct_and_sized():
    shapes = {char: text_mask(char).tobytes() for char in GLYPHS}
    assert len(set(shapes.values())) == len(GLYPHS)
    assert text_size("D1") == (7, 11) and text_mask("D1", 3).shape == (21, 33)
    assert np.array_equal(text_mask("builder"), text_mask("BUILDER"))
    assert np.array_equal(text_mask("~"), text_mask("?"))
    assert text_mask("TURN 3/20").any() and not text_mask("   ").any()
    with pytest.raises(ValueError, match="scale"):
        text_mask("x", 0)


def test_draw_text_paints_ink_and_clips_at_the_edges():
    image = np.zeros((10, 10, 3), np.uint8)
    draw_text(image, "A", 2, 1, (255, 0, 0))
    assert np.array_equal(image[1:8, 2:7, 0] == 255, text_mask("A"))
    assert image[:, :, 1:].max() == 0 and image[8:].max() == 0
    clipped = np.zeros((4, 4, 3), np.uint8)
    draw_text(clipped, "AB", -3, -2, (9, 9, 9))
    assert np.array_equal(clipped[:, :, 0] == 9, text_mask("AB")[2:6, 3:7])
    draw_text(clipped, "A", 50, 50, (1, 1, 1))  # entirely outside: nothing, no error


def ink(region: np.ndarray) -> int:
    return int(np.count_nonzero((region != BACKGROUND_RGB).any(axis=-1)))


def test_panel_holds_the_picture_the_title_and_the_four_seat_labels():
    structure = generate_structure(2)
    picture = render_rgb(structure)
    panel = render_panel(structure, "TURN 3/20")
    top, left = panel_origin()
    h, w = picture.shape[:2]
    assert np.array_equal(panel[top:top + h, left:left + w], picture)
    strips = {
        "left (D1)": panel[top:top + h, :left],
        "right (D3)": panel[top:top + h, left + w:],
        "top (title, D2)": panel[:top],
        "bottom (BUILDER)": panel[top + h:],
    }
    for name, strip in strips.items():
        assert ink(strip) > 20, name
    assert ink(panel[:top]) > ink(render_panel(structure, "")[:top])  # the title is drawn
    assert not np.array_equal(render_panel(structure, "TURN 4/20"), panel)
    assert panel.shape == render_panel(Structure.empty(3, 3), "TURN 3/20").shape
    # D1 sits level with the middle of the left floor edge, D3 with the right one
    for (fi, fj), strip in (((0.5, 0.0), strips["left (D1)"]), ((0.5, 1.0), strips["right (D3)"])):
        _, y = project(3, 3, (fi * 3, fj * 3, 0.0))
        rows = np.flatnonzero((strip != BACKGROUND_RGB).any(axis=(1, 2)))
        assert rows.min() <= y <= rows.max()


def test_frame_with_target_puts_the_target_panel_on_the_right():
    board, target = generate_structure(0), generate_structure(5)
    alone = render_frame(board, "TURN 0/20")
    both = render_frame(board, "TURN 0/20", target)
    assert both.shape == (alone.shape[0], 2 * alone.shape[1], 3)
    assert np.array_equal(both[:, :alone.shape[1]], alone)
    right = both[:, alone.shape[1]:]
    assert np.array_equal(right, render_panel(target, "TARGET"))
    top, left = panel_origin()
    picture = render_rgb(target)
    assert np.array_equal(right[top:top + picture.shape[0], left:left + picture.shape[1]], picture)


# ------------------------------------------------------------------------------- PNG


def decode_png(data: bytes) -> np.ndarray:
    """A tiny decoder for 8-bit PNGs with filter 0 (what ``encode_png`` writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        tag, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(tag + body) & 0xFFFFFFFF
        if tag == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type = header[:4]
    assert depth == 8
    channels = {0: 1, 2: 3, 6: 4}[colour_type]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * channels)
    assert (raw[:, 0] == 0).all()
    image = raw[:, 1:].reshape(height, width, channels)
    return image[:, :, 0] if channels == 1 else image


def test_png_round_trip(tmp_path):
    image = render_rgb(generate_structure(0))
    path = write_png(tmp_path / "board.png", image)
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert np.array_equal(decode_png(data), image)
    assert data == encode_png(image)  # deterministic bytes
    grey = np.arange(12, dtype=np.uint8).reshape(3, 4)
    rgba = np.zeros((2, 5, 4), np.uint8)
    rgba[..., 3] = 255
    assert np.array_equal(decode_png(encode_png(grey)), grey)
    assert np.array_equal(decode_png(encode_png(rgba)), rgba)
    with pytest.raises(ValueError):
        encode_png(np.zeros((2, 2, 2), np.uint8))


def test_png_readable_by_matplotlib(tmp_path):
    mpimg = pytest.importorskip("matplotlib.image")
    image = render_rgb(generate_structure(1), cell_px=24)
    path = write_png(tmp_path / "board.png", image)
    read = mpimg.imread(str(path))
    assert read.shape == image.shape
    assert np.array_equal(np.round(read * 255).astype(np.uint8), image)
