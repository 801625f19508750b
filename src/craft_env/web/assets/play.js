// A seat's page, or the organiser's watching page (docs/serve.md). It shows what the server sends for
// this link's token and nothing else; every text goes in through textContent.
(function () {
  "use strict";
  const S = craftServe();
  const $ = (id) => document.getElementById(id);
  const seatToken = S.token("seat"), watchToken = S.token("watch");
  const bearer = seatToken || watchToken;
  let draw = null, state = null, quarter = 0, picked = null, lastFrameKey = null;

  function drawing(colours) { if (!draw) draw = craftDrawing(colours); return draw; }

  function statusLine(pub, yourTurn, seat, late) {
    if (pub.status !== "playing") return "Game " + pub.status + (pub.error ? ": " + pub.error : "");
    const head = "Structure " + pub.game + "/" + pub.games + ", turn " + pub.turn + "/" + pub.max_turns + ": ";
    if (yourTurn) return head + "your turn";
    if (!pub.acting) return head + "the game moves on";
    return head + "waiting for " + (pub.acting === seat ? "you" : pub.acting) + ((late || []).indexOf(pub.acting) >= 0 ? " (late)" : "");
  }

  // The seat's board, turned `quarter` times; the builder picks cells on it as on the plan (a click on a
  // column's floor or blocks), mapped back to the cell's name by turning the rest of the way round.
  function showBoard(node, frame, hiddenCells) {
    const d = draw, n = frame.n;
    S.clear(node);
    const boxes = S.turnBoxes(frame.board || [], n, quarter);
    const hidden = (hiddenCells || []).map((c) => S.turnCell(c[0], c[1], n, quarter));
    const options = { hidden: hidden, px: 40 };
    if (frame.seat === "builder") {
      options.onCell = (i, j) => { const c = S.turnCell(i, j, n, (4 - quarter) % 4); clickCell(c[0], c[1]); };
      if (picked) options.picked = S.turnCell(picked[0], picked[1], n, quarter);
    }
    node.appendChild(d.drawBoard(n, frame.h, boxes, options));
    $("view-note").textContent = quarter ? "view turned " + quarter * 90 + " degrees" : "seen from the builder's seat";
  }

  // ------------------------------------------------------------------ a seat

  function renderGrid(frame) {
    const grid = S.clear($("grid"));
    grid.style.gridTemplateColumns = "repeat(" + frame.n + ", auto)";
    const h = S.heights(frame.board, frame.n), top = S.tops(frame.board, frame.n);
    for (let i = 0; i < frame.n; i++) for (let j = 0; j < frame.n; j++) {
      const b = document.createElement("button");
      b.type = "button";
      b.id = "cell-" + i + "-" + j;
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      if (top[i][j] >= 0) swatch.style.background = state.colours[top[i][j]].base;
      b.append(swatch, "(" + i + "," + j + ") h" + h[i][j]);
      b.setAttribute("aria-label", "cell (" + i + "," + j + "), " + h[i][j] + " block(s) high");
      if (picked && picked[0] === i && picked[1] === j) b.className = "picked";
      b.addEventListener("click", () => clickCell(i, j));
      grid.appendChild(b);
    }
  }

  function clickCell(i, j) {
    const h = S.heights(state.frame.board, state.frame.n);
    const action = $("action").value, colour = $("colour").value, size = $("size").value;
    const at = "(" + i + "," + j + ")";
    if (action === "remove") { $("move").value = "remove " + at; picked = null; }
    else if (size === "s") { $("move").value = "place " + colour + "s " + at + " L" + h[i][j]; picked = null; }
    else if (picked && Math.abs(picked[0] - i) + Math.abs(picked[1] - j) === 1) {
      const layer = Math.max(h[picked[0]][picked[1]], h[i][j]);
      $("move").value = "place " + colour + "l (" + picked[0] + "," + picked[1] + ")-" + at + " L" + layer;
      picked = null;
    } else { picked = [i, j]; $("move").value = ""; $("refusal").textContent = "Now click a neighbouring cell for the block's other half."; }
    renderGrid(state.frame);
    showBoard($("board"), state.frame, state.frame.unseen);
    if (!picked) { $("refusal").textContent = ""; $("send-move").focus(); }
  }

  function renderDirector(frame) {
    S.clear($("wall")).appendChild(draw.drawWall(frame.seat, frame.wall, frame.h));
    const select = S.clear($("intent"));
    for (const option of frame.options) {
      const o = document.createElement("option");
      o.value = String(option.id);
      o.textContent = option.text;
      select.appendChild(o);
    }
    const examples = frame.options.slice(1, 3).map((o) => o.text);
    $("examples").textContent = examples.length ? "e.g. \u201c" + examples.join("\u201d or \u201c") + "\u201d" : "";
  }

  function renderCandidates(frame) {
    const list = S.clear($("candidates"));
    $("candidates-caption").hidden = !frame.candidates.length;
    frame.candidates.forEach((line, k) => {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "candidate";
      b.textContent = line;
      b.addEventListener("click", () => send({ candidate: k + 1 }));
      li.appendChild(b);
      list.appendChild(li);
    });
  }

  function renderSeat(data) {
    const pub = data.public, frame = data.frame;
    $("seat-view").hidden = false;
    $("who").textContent = "You are " + (data.seat === "builder" ? "the builder" : "director " + data.seat);
    $("status").textContent = statusLine(pub, data.your_turn, data.seat);
    $("status").className = "status" + (data.your_turn ? " your-turn" : "");
    document.body.setAttribute("data-turn", frame ? String(frame.turn) : "0");
    document.body.setAttribute("data-your-turn", data.your_turn ? "1" : "0");
    document.body.setAttribute("data-status", pub.status);
    $("waiting-first").hidden = !!frame || pub.status !== "playing";
    const playing = data.your_turn && pub.status === "playing";
    for (const id of ["send-message", "pass-director", "send-intent", "send-move", "pass-builder"]) $(id).disabled = !playing;
    if (!frame) return;
    const key = pub.version + ":" + frame.turn;
    $("board-hint").textContent = frame.unseen.length ? "(dashed cells: not in your view)" : "";
    showBoard($("board"), frame, frame.unseen);
    S.conversation($("conversation"), frame.conversation);
    $("observation").textContent = frame.text;
    const director = data.seat !== "builder";
    $("director-input").hidden = !director;
    $("wall-panel").hidden = !director;
    $("builder-input").hidden = director;
    if (key !== lastFrameKey) {
      if (director) renderDirector(frame); else { renderGrid(frame); renderCandidates(frame); }
      lastFrameKey = key;
    }
    for (const b of document.querySelectorAll("button.candidate")) b.disabled = !playing;
  }

  async function send(payload) {
    $("refusal").textContent = "";
    const answer = await S.api("POST", "/api/act", bearer, payload);
    if (!answer.ok) { $("refusal").textContent = answer.data.error || "refused"; return false; }
    $("message").value = "";
    $("move").value = "";
    picked = null;
    return true;
  }

  // ------------------------------------------------------------------ the organiser's view

  function renderWatch(data) {
    const pub = data.public, frame = data.frame, target = frame.target;
    $("watch-view").hidden = false;
    $("who").textContent = "Watching: the organiser's view, with the whole target";
    $("status").textContent = statusLine(pub, false, null, data.late);
    document.body.setAttribute("data-status", pub.status);
    document.body.setAttribute("data-turn", String(frame.turn));
    S.clear($("target")).appendChild(draw.drawBoard(target.n, target.h, target.target, { hidden: target.hidden, px: 30 }));
    S.clear($("watch-board")).appendChild(draw.drawBoard(target.n, target.h, frame.board, { hidden: target.hidden, px: 30 }));
    const walls = S.clear($("walls"));
    for (const seat in target.walls) walls.appendChild(draw.drawWall(seat, target.walls[seat], target.h));
    const seats = S.clear($("seats"));
    for (const seat in data.kinds) {
      const li = document.createElement("li");
      const label = data.labels[seat] ? " (" + data.labels[seat] + ")" : "";
      li.textContent = seat + label + ": " + data.kinds[seat] + (pub.acting === seat ? ", acting" : "") +
        (data.late.indexOf(seat) >= 0 ? ", late" : "");
      seats.appendChild(li);
    }
    S.conversation($("watch-conversation"), frame.conversation);
  }

  // ------------------------------------------------------------------ wiring

  function onState(data) {
    state = data;
    drawing(data.colours);
    $("title").textContent = "CRAFT" + (data.public.title ? ": " + data.public.title : "");
    if (seatToken) renderSeat(data); else renderWatch(data);
    $("results-box").hidden = !data.public.results.length;
    S.results($("results"), data.public);
  }

  function onTrouble(message) { $("trouble").textContent = message || ""; }

  $("message-form").addEventListener("submit", (e) => { e.preventDefault(); send({ message: $("message").value }); });
  $("intent-form").addEventListener("submit", (e) => { e.preventDefault(); send({ intent: Number($("intent").value) }); });
  $("move-form").addEventListener("submit", (e) => { e.preventDefault(); send({ move: $("move").value }); });
  $("pass-director").addEventListener("click", () => send({ pass: true }));
  $("pass-builder").addEventListener("click", () => send({ pass: true }));
  $("turn-view").addEventListener("click", () => { quarter = (quarter + 1) % 4; if (state && state.frame && seatToken) showBoard($("board"), state.frame, state.frame.unseen); });
  document.addEventListener("keydown", (e) => {
    const typing = e.target && /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName);
    if (!typing && (e.key === "r" || e.key === "R")) $("turn-view").click();
  });
  window.addEventListener("hashchange", () => window.location.reload());  // another link: another seat
  if (!bearer) { onTrouble("This page needs a seat's link (…/play#seat=…) or a spectator's link (…/play#watch=…)."); return; }
  S.poll(bearer, onState, onTrouble);
})();
