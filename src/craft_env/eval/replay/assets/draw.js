// Drawing shared by the replay page and the leaderboard (docs/replay.md, docs/leaderboard.md): boards as
// isometric SVG, directors' walls, and the two DOM helpers they build with. craftDrawing(colours) takes the
// block colours of craft_env.eval.replay.block_colours(); every text goes in through textContent.
function craftDrawing(colours) {
  "use strict";

  const COLOURS = colours;
  const SVG_NS = "http://www.w3.org/2000/svg";
  const INK = "#26262c";
  const MARK = "#e200e2";
  const YAW = 28 * Math.PI / 180;
  const PITCH = 33 * Math.PI / 180;
  const SLAB = 0.14;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function svgEl(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const key in attrs) node.setAttribute(key, String(attrs[key]));
    return node;
  }

  // ------------------------------------------------------------------ isometric boards

  function camera(n, h, px) {
    const ax = [
      [-px * Math.sin(YAW), px * Math.cos(YAW) * Math.sin(PITCH)],
      [px * Math.cos(YAW), px * Math.sin(YAW) * Math.sin(PITCH)],
      [0, -px * Math.cos(PITCH)],
    ];
    const raw = (p) => [p[0] * ax[0][0] + p[1] * ax[1][0] + p[2] * ax[2][0],
                        p[0] * ax[0][1] + p[1] * ax[1][1] + p[2] * ax[2][1]];
    let lo = [Infinity, Infinity], hi = [-Infinity, -Infinity];
    for (const i of [0, n]) for (const j of [0, n]) for (const z of [-SLAB, h]) {
      const q = raw([i, j, z]);
      lo = [Math.min(lo[0], q[0]), Math.min(lo[1], q[1])];
      hi = [Math.max(hi[0], q[0]), Math.max(hi[1], q[1])];
    }
    const pad = Math.max(4, 0.3 * px);
    return {
      width: Math.ceil(hi[0] - lo[0] + 2 * pad),
      height: Math.ceil(hi[1] - lo[1] + 2 * pad),
      at: (p) => { const q = raw(p); return [q[0] - lo[0] + pad, q[1] - lo[1] + pad]; },
    };
  }

  function points(cam, corners) {
    return corners.map((p) => cam.at(p).map((v) => v.toFixed(1)).join(",")).join(" ");
  }

  function edgesPath(cam, corners, keep) {
    let d = "";
    for (let e = 0; e < corners.length; e++) {
      if (!keep[e]) continue;
      const a = cam.at(corners[e]), b = cam.at(corners[(e + 1) % corners.length]);
      d += "M" + a[0].toFixed(1) + " " + a[1].toFixed(1) + "L" + b[0].toFixed(1) + " " + b[1].toFixed(1);
    }
    return d;
  }

  // Unit cubes of the boxes [i, j, layer, colour, i2, j2], each knowing where its other half is.
  function cubes(boxes) {
    const out = [];
    for (const b of boxes) {
      const [i, j, z, c, i2, j2] = b;
      out.push({ i: i, j: j, z: z, c: c, di: i2 - i, dj: j2 - j });
      if (i2 !== i || j2 !== j) out.push({ i: i2, j: j2, z: z, c: c, di: i - i2, dj: j - j2 });
    }
    // lower layers first, then far to near, then left to right: the painter's order for unit cubes
    out.sort((a, b) => a.z - b.z || a.i - b.i || a.j - b.j);
    return out;
  }

  // options: hidden (cells drawn dashed), highlight (cubes [i, j, layer] outlined), px (scale), and for a
  // board one picks cells on (docs/serve.md): onCell(i, j), called with the column under a click on its
  // floor tile or any visible face of its blocks, and picked [i, j], a column outlined at its top. Cells
  // are in the drawing's own coordinates; each clickable shape carries data-cell="i,j" and data-face.
  function drawBoard(n, h, boxes, options) {
    const opts = options || {};
    const onCell = typeof opts.onCell === "function" ? opts.onCell : null;
    const clickable = (node, i, j, face) => {
      if (!onCell) return node;
      node.setAttribute("data-cell", i + "," + j);
      node.setAttribute("data-face", face);
      node.style.cursor = "pointer";
      node.addEventListener("click", () => onCell(i, j));
      return node;
    };
    const cam = camera(n, h, opts.px || 34);
    const root = svgEl("svg", { width: cam.width, height: cam.height, viewBox: "0 0 " + cam.width + " " + cam.height, role: "img" });
    root.appendChild(svgEl("polygon", { points: points(cam, [[n, 0, 0], [n, n, 0], [n, n, -SLAB], [n, 0, -SLAB]]), fill: "#acaaa0" }));
    root.appendChild(svgEl("polygon", { points: points(cam, [[0, n, 0], [n, n, 0], [n, n, -SLAB], [0, n, -SLAB]]), fill: "#8c8a82" }));
    const hidden = new Set((opts.hidden || []).map((c) => c[0] + "," + c[1]));
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
      const isHidden = hidden.has(i + "," + j);
      const tile = svgEl("polygon", {
        points: points(cam, [[i, j, 0], [i, j + 1, 0], [i + 1, j + 1, 0], [i + 1, j, 0]]),
        fill: isHidden ? "#f6d0f2" : ((i + j) % 2 ? "#cecdc2" : "#dcdad0"),
        stroke: isHidden ? MARK : "#929088", "stroke-width": isHidden ? 1.5 : 0.7,
      });
      if (isHidden) tile.setAttribute("stroke-dasharray", "4 3");
      root.appendChild(clickable(tile, i, j, "floor"));
    }
    const cells = cubes(boxes || []);
    const filled = new Set(cells.map((q) => q.i + "," + q.j + "," + q.z));
    const has = (i, j, z) => filled.has(i + "," + j + "," + z);
    const lit = new Set((opts.highlight || []).map((c) => c[0] + "," + c[1] + "," + c[2]));
    for (const q of cells) {
      const { i, j, z } = q;
      const shade = COLOURS[q.c] || COLOURS[0];
      const partner = (di, dj) => q.di === di && q.dj === dj;
      const faces = [];
      if (!has(i, j, z + 1)) {
        faces.push([shade.top, [[i, j, z + 1], [i, j + 1, z + 1], [i + 1, j + 1, z + 1], [i + 1, j, z + 1]],
          [!partner(-1, 0), !partner(0, 1), !partner(1, 0), !partner(0, -1)], "top"]);
      }
      if (!has(i + 1, j, z)) {
        faces.push([shade.front, [[i + 1, j, z + 1], [i + 1, j + 1, z + 1], [i + 1, j + 1, z], [i + 1, j, z]],
          [true, !partner(0, 1), true, !partner(0, -1)], "front"]);
      }
      if (!has(i, j + 1, z)) {
        faces.push([shade.right, [[i, j + 1, z + 1], [i + 1, j + 1, z + 1], [i + 1, j + 1, z], [i, j + 1, z]],
          [true, !partner(1, 0), true, !partner(-1, 0)], "side"]);
      }
      const isLit = lit.has(i + "," + j + "," + z);
      for (const [fill, corners, keep, face] of faces) {
        root.appendChild(clickable(svgEl("polygon", { points: points(cam, corners), fill: fill, stroke: fill, "stroke-width": 0.8 }), i, j, face));
        root.appendChild(clickable(svgEl("path", {
          d: edgesPath(cam, corners, keep), stroke: isLit ? MARK : INK,
          "stroke-width": isLit ? 2.6 : 1.2, "stroke-linecap": "round", fill: "none",
        }), i, j, face));
      }
    }
    if (opts.picked) {
      const [i, j] = opts.picked;
      let z = 0;
      for (const q of cells) if (q.i === i && q.j === j) z = Math.max(z, q.z + 1);
      root.appendChild(svgEl("polygon", {
        points: points(cam, [[i, j, z], [i, j + 1, z], [i + 1, j + 1, z], [i + 1, j, z]]), class: "picked",
        fill: "none", stroke: MARK, "stroke-width": 3, "pointer-events": "none",
      }));
    }
    return root;
  }

  // ------------------------------------------------------------------ target views

  function drawWall(seat, wall, h) {
    const box = el("figure", "panel wall");
    const caption = el("figcaption");
    caption.appendChild(el("span", "seat", seat));
    caption.appendChild(document.createTextNode(" sees the " + wall.side + " wall"));
    box.appendChild(caption);
    const size = 26, gap = 3, slots = wall.cells.length;
    const width = slots * (size + gap) + gap, height = h * (size + gap) + gap;
    const root = svgEl("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height });
    for (let level = 0; level < h; level++) {
      const row = wall.layers[level] || [];
      const y = gap + (h - 1 - level) * (size + gap);
      for (let s = 0; s < slots; s++) {
        const x = gap + s * (size + gap);
        const [c, sz] = row[s] || [-1, 0];
        if (c < 0) {
          root.appendChild(svgEl("rect", { x: x, y: y, width: size, height: size, fill: "none", stroke: "#d4d2c8", "stroke-dasharray": "2 2" }));
          continue;
        }
        const next = row[s + 1];
        const joined = sz === 2 && next && next[1] === 2 && next[0] === c;
        const w = joined ? 2 * size + gap : size;
        root.appendChild(svgEl("rect", { x: x, y: y, width: w, height: size, rx: 3, fill: COLOURS[c].base, stroke: INK, "stroke-width": 1 }));
        if (joined) s++;
      }
    }
    box.appendChild(root);
    box.appendChild(el("div", "cells", "left to right: " + wall.cells.join(" ")));
    return box;
  }

  return { el: el, svgEl: svgEl, drawBoard: drawBoard, drawWall: drawWall, INK: INK, MARK: MARK };
}
