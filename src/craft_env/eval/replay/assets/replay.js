// CRAFT replay page (docs/replay.md). Draws what craft_env.eval.replay.page computed;
// every logged text goes into the page through textContent, never as markup.
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("replay-data").textContent);
  const GAMES = DATA.games;
  const COLOURS = DATA.colours;
  const { el, svgEl, drawBoard, drawWall, INK } = craftDrawing(COLOURS);
  const METRIC_ROWS = [
    ["progress", "progress"], ["distance", "distance (moves left)"], ["completion", "completion"],
    ["position_accuracy", "position accuracy"], ["iou", "IoU"], ["voxel_iou", "voxel IoU"],
  ];

  // ------------------------------------------------------------------ DOM helpers

  function $(id) { return document.getElementById(id); }

  function fmt(value, digits) {
    if (value === undefined || value === null || Number.isNaN(value)) return "\u2014";
    if (typeof value !== "number") return String(value);
    return value.toFixed(digits === undefined ? 3 : digits);
  }

  // ------------------------------------------------------------------ target map (boards and walls: draw.js)

  function drawTargetMap(game) {
    const table = el("table");
    const stacks = {};
    for (const b of game.target || []) {
      for (const [i, j] of [[b[0], b[1]], [b[4], b[5]]]) {
        const key = i + "," + j;
        (stacks[key] = stacks[key] || [])[b[2]] = { c: b[3], large: b[4] !== b[0] || b[5] !== b[1] };
      }
    }
    const hidden = new Set(game.hidden.map((c) => c[0] + "," + c[1]));
    for (let i = 0; i < game.n; i++) {
      const tr = el("tr");
      for (let j = 0; j < game.n; j++) {
        const td = el("td", hidden.has(i + "," + j) ? "hidden-cell" : "");
        const stack = el("div", "stack");
        for (const block of stacks[i + "," + j] || []) {
          if (!block) continue;
          const chip = el("div", "chip");
          chip.style.background = COLOURS[block.c].base;
          if (block.large) chip.style.outline = "1px solid " + INK;
          stack.appendChild(chip);
        }
        td.appendChild(stack);
        td.appendChild(el("div", "coord", "(" + i + "," + j + ")"));
        td.title = hidden.has(i + "," + j) ? "seen by no director" : "";
        tr.appendChild(td);
      }
      table.appendChild(tr);
    }
    return table;
  }

  // ------------------------------------------------------------------ chart

  function drawChart(game, t) {
    const turns = game.turns, width = 300, height = 130, left = 30, right = 34, top = 8, bottom = 20;
    const root = svgEl("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height });
    const count = Math.max(turns.length, 1);
    const x = (k) => left + (count === 1 ? 0.5 : k / (count - 1)) * (width - left - right);
    const maxDistance = Math.max(1, ...turns.map((r) => r.m.distance || 0));
    const yProgress = (v) => top + (1 - v) * (height - top - bottom);
    const yDistance = (v) => top + (1 - v / maxDistance) * (height - top - bottom);
    root.appendChild(svgEl("rect", { x: left, y: top, width: width - left - right, height: height - top - bottom, fill: "#fbfbf8", stroke: "#d4d2c8" }));
    const line = (key, y, colour, dash) => {
      const pts = [];
      turns.forEach((r, k) => { if (typeof r.m[key] === "number") pts.push(x(k).toFixed(1) + "," + y(r.m[key]).toFixed(1)); });
      if (!pts.length) return;
      const path = svgEl("polyline", { points: pts.join(" "), fill: "none", stroke: colour, "stroke-width": 2 });
      if (dash) path.setAttribute("stroke-dasharray", "5 3");
      root.appendChild(path);
    };
    line("progress", yProgress, "#3ea84a", false);
    line("distance", yDistance, "#f48a1c", true);
    if (t >= 1 && t <= turns.length) {
      root.appendChild(svgEl("line", { x1: x(t - 1), x2: x(t - 1), y1: top, y2: height - bottom, class: "cur" }));
    }
    const label = (text, px, py, anchor, colour) => {
      const node = svgEl("text", { x: px, y: py, "font-size": 10, "text-anchor": anchor, fill: colour || "#6b6b72" });
      node.textContent = text;
      root.appendChild(node);
    };
    label("1.0", left - 3, top + 8, "end", "#3ea84a");
    label("0", left - 3, height - bottom, "end", "#3ea84a");
    label(String(maxDistance), width - right + 3, top + 8, "start", "#f48a1c");
    label("0", width - right + 3, height - bottom, "start", "#f48a1c");
    label("turn " + (turns.length ? turns[0].t : ""), left, height - 6, "start");
    label(String(turns.length ? turns[turns.length - 1].t : ""), width - right, height - 6, "end");
    label("progress \u2014  distance - -", width / 2, height - 6, "middle");
    root.addEventListener("click", (event) => {
      const box = root.getBoundingClientRect();
      const px = (event.clientX - box.left) * width / box.width;
      const k = Math.round((px - left) / (width - left - right) * (count - 1));
      go(state.g, Math.min(Math.max(k, 0), turns.length - 1) + 1);
    });
    return root;
  }

  // ------------------------------------------------------------------ index

  const COLUMNS = [
    { key: "g", label: "#", value: (g, k) => k },
    { key: "run", label: "run", text: true, value: (g) => g.run },
    { key: "sid", label: "structure", text: true, value: (g) => g.sid },
    { key: "tier", label: "tier", text: true, value: (g) => g.complexity || "" },
    { key: "condition", label: "condition", text: true, value: (g) => g.condition },
    { key: "status", label: "status", text: true, value: (g) => g.status },
    { key: "turns", label: "turns", value: (g) => g.turns.length },
    { key: "progress", label: "progress", value: (g) => g.final.progress },
    { key: "completion", label: "completion", value: (g) => g.final.completion },
    { key: "position_accuracy", label: "pos. acc.", value: (g) => g.final.position_accuracy },
    { key: "iou", label: "IoU", value: (g) => g.final.iou },
    { key: "fail", label: "fail", value: (g) => g.fail },
    { key: "completed", label: "completed", value: (g) => (g.completed ? 1 : 0) },
  ];
  const sort = { key: "g", dir: 1 };
  let order = GAMES.map((g, k) => k);

  function sortOrder() {
    const column = COLUMNS.find((c) => c.key === sort.key);
    const value = (k) => column.value(GAMES[k], k);
    order = GAMES.map((g, k) => k).sort((a, b) => {
      const va = value(a), vb = value(b);
      const missingA = va === undefined || va === null, missingB = vb === undefined || vb === null;
      if (missingA || missingB) return missingA - missingB || a - b;
      const cmp = column.text ? String(va).localeCompare(String(vb)) : va - vb;
      return cmp * sort.dir || a - b;
    });
  }

  function renderIndex() {
    const head = document.querySelector("#index-table thead tr");
    head.replaceChildren();
    for (const column of COLUMNS) {
      const th = el("th", column.text ? "text" : "", column.label);
      if (column.key === sort.key) th.classList.add(sort.dir > 0 ? "sorted-asc" : "sorted-desc");
      th.dataset.key = column.key;
      th.addEventListener("click", () => {
        sort.dir = sort.key === column.key ? -sort.dir : 1;
        sort.key = column.key;
        sortOrder();
        renderIndex();
      });
      head.appendChild(th);
    }
    const body = document.querySelector("#index-table tbody");
    body.replaceChildren();
    for (const k of order) {
      const game = GAMES[k];
      const tr = el("tr");
      tr.dataset.g = String(k);
      for (const column of COLUMNS) {
        const v = column.value(game, k);
        let text = column.text || column.key === "g" || column.key === "turns" ? v : fmt(v);
        if (column.key === "completed") text = v ? "yes" : "no";
        const td = el("td", column.text ? "text" : "", text);
        if (column.key === "completed") td.classList.add(v ? "yes" : "no");
        tr.appendChild(td);
      }
      tr.addEventListener("click", () => go(k, game.turns.length ? 1 : 0));
      body.appendChild(tr);
    }
    const done = GAMES.filter((g) => g.completed).length;
    $("index-summary").textContent = GAMES.length + " games, " + done + " completed. Click a row (or a column to sort).";
  }

  // ------------------------------------------------------------------ game view

  function renderConversation(turn) {
    const box = $("conversation");
    box.replaceChildren();
    if (!turn) {
      box.appendChild(el("div", "caption", "The starting board"));
      box.appendChild(el("p", "hint", "Step forward (right arrow) to see turn 1."));
      return;
    }
    box.appendChild(el("div", "caption", "Turn " + turn.t + ": the directors, in speaking order"));
    for (const d of turn.dirs) {
      const div = el("div", "director");
      const who = el("div");
      who.appendChild(el("span", "seat", d.seat));
      if (d.arch) who.appendChild(el("span", "hint", " " + d.arch));
      div.appendChild(who);
      div.appendChild(el("div", "msg", d.msg === null ? "(no message)" : d.msg));
      if (d.reason) div.appendChild(el("div", "error", "reply not usable: " + d.reason));
      if (d.think) {
        const details = el("details");
        details.appendChild(el("summary", "", "think (private)"));
        details.appendChild(el("div", "", d.think));
        div.appendChild(details);
      }
      box.appendChild(div);
    }
    const b = turn.builder;
    const div = el("div", "builder");
    div.appendChild(el("span", "seat", "Builder"));
    div.appendChild(el("span", "hint", b.followed.length ? " follows " + b.followed.join(", ") : " follows nobody"));
    if (b.sent) div.appendChild(el("div", "msg", "replied: " + b.sent));
    if (turn.question) div.appendChild(el("div", "msg question", "asks: " + turn.question));
    if (b.reason) div.appendChild(el("div", "error", "reply not usable: " + b.reason));
    if (b.think) {
      const details = el("details");
      details.appendChild(el("summary", "", "think (private)"));
      details.appendChild(el("div", "", b.think));
      div.appendChild(details);
    }
    box.appendChild(div);
  }

  function renderOutcome(turn) {
    const move = $("move"), outcome = $("outcome"), category = $("category"), oracle = $("oracle");
    oracle.replaceChildren();
    outcome.className = "";
    if (!turn) {
      move.textContent = "\u2014";
      outcome.textContent = "";
      category.textContent = "";
      return;
    }
    move.textContent = turn.move || (turn.question ? "(a question, no move)" : "(no move)");
    if (turn.legal === false) {
      outcome.className = "failed";
      outcome.textContent = "failed: " + (turn.reason || "no reason logged");
    } else {
      outcome.className = turn.optimal ? "legal" : "legal suboptimal";
      outcome.textContent = "legal, " + (turn.optimal ? "optimal" : "not optimal") +
        (turn.followed_oracle ? ", an oracle candidate" : "");
    }
    category.textContent = "taxonomy: " + (turn.cat || "\u2014 (no candidates offered)");
    if (turn.oracle === null || turn.oracle === undefined) {
      oracle.appendChild(el("li", "hint", "oracle off"));
    } else if (!turn.oracle.length) {
      oracle.appendChild(el("li", "hint", "none offered"));
    }
    for (const m of turn.oracle || []) oracle.appendChild(el("li", m === turn.move ? "taken" : "", m));
  }

  function renderMetrics(turn) {
    const body = document.querySelector("#metrics tbody");
    body.replaceChildren();
    for (const [key, label] of METRIC_ROWS) {
      const tr = el("tr");
      tr.appendChild(el("td", "", label));
      const td = el("td", "", turn ? fmt(turn.m[key], key === "distance" ? 0 : 3) : "\u2014");
      td.id = "m-" + key;
      tr.appendChild(td);
      body.appendChild(tr);
    }
  }

  function renderGame(g, t) {
    const game = GAMES[g];
    const turn = t >= 1 ? game.turns[t - 1] : null;
    $("game-title").textContent = game.sid + " \u00b7 " + game.run + " \u00b7 game #" + g + " of " + GAMES.length;
    const f = game.final;
    $("game-sub").textContent = [game.condition, game.complexity, game.status,
      "final progress " + fmt(f.progress), "IoU " + fmt(f.iou), game.completed ? "completed" : "not completed"]
      .filter(Boolean).join(" \u00b7 ") + (game.error ? " \u00b7 error: " + game.error : "");
    $("turn-label").textContent = turn ? "Turn " + turn.t + " / " + game.turns.length : "Start (" + game.turns.length + " turns)";
    const boards = $("board");
    boards.replaceChildren();
    const boxes = turn ? turn.after : game.start;
    if (boxes) boards.appendChild(drawBoard(game.n, game.h, boxes, { highlight: turn ? turn.hl : [], px: 38 }));
    else boards.appendChild(el("p", "hint", "board not logged"));
    $("board-caption").textContent = turn ? "Board after turn " + turn.t : "Starting board";
    const target = $("target"), map = $("target-map"), walls = $("walls");
    target.replaceChildren(); map.replaceChildren(); walls.replaceChildren();
    if (game.target) {
      target.appendChild(drawBoard(game.n, game.h, game.target, { hidden: game.hidden, px: 26 }));
      map.appendChild(drawTargetMap(game));
      for (const seat in game.walls) walls.appendChild(drawWall(seat, game.walls[seat], game.h));
    } else {
      target.appendChild(el("p", "hint", "target not found (dataset missing)"));
    }
    const chart = $("chart");
    chart.replaceChildren();
    chart.appendChild(drawChart(game, t));
    renderMetrics(turn);
    renderConversation(turn);
    renderOutcome(turn);
  }

  // ------------------------------------------------------------------ navigation

  const state = { g: null, t: 0 };

  function parseHash() {
    const hash = location.hash.replace(/^#/, "");
    const g = /(?:^|&)g=(\d+)/.exec(hash), t = /(?:^|&)t=(\d+)/.exec(hash);
    if (!g || Number(g[1]) >= GAMES.length) return { g: null, t: 0 };
    const game = GAMES[Number(g[1])];
    const turn = t ? Number(t[1]) : (game.turns.length ? 1 : 0);
    return { g: Number(g[1]), t: Math.min(Math.max(turn, 0), game.turns.length) };
  }

  function go(g, t) {
    const hash = g === null ? "" : "#g=" + g + "&t=" + t;
    if (location.hash === hash || (hash === "" && location.hash === "")) render();
    else location.hash = hash;
  }

  function render() {
    const next = parseHash();
    state.g = next.g;
    state.t = next.t;
    $("index-view").hidden = state.g !== null;
    $("game-view").hidden = state.g === null;
    if (state.g !== null) renderGame(state.g, state.t);
    document.body.dataset.game = state.g === null ? "" : String(state.g);
    document.body.dataset.turn = String(state.t);
  }

  function step(dt) {
    if (state.g === null) return;
    const last = GAMES[state.g].turns.length;
    go(state.g, Math.min(Math.max(state.t + dt, 0), last));
  }

  function stepGame(dg) {
    if (!GAMES.length) return;
    const at = state.g === null ? -1 : order.indexOf(state.g);
    const next = order[Math.min(Math.max(at + dg, 0), order.length - 1)];
    go(next, GAMES[next].turns.length ? 1 : 0);
  }

  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const keys = {
      ArrowLeft: () => step(-1), ArrowRight: () => step(1), ArrowUp: () => stepGame(-1), ArrowDown: () => stepGame(1),
      Home: () => state.g !== null && go(state.g, 0), End: () => state.g !== null && go(state.g, GAMES[state.g].turns.length),
      Escape: () => go(null, 0),
    };
    if (keys[event.key]) {
      event.preventDefault();
      keys[event.key]();
    }
  });
  $("prev-turn").addEventListener("click", () => step(-1));
  $("next-turn").addEventListener("click", () => step(1));
  $("to-index").addEventListener("click", (event) => { event.preventDefault(); go(null, 0); });
  window.addEventListener("hashchange", render);

  renderIndex();
  render();
})();
