// The organiser's page (docs/serve.md): set up a game seat by seat, get one link per person and a
// spectator link, and follow every game of the server.
(function () {
  "use strict";
  const S = craftServe();
  const $ = (id) => document.getElementById(id);
  const token = S.token("organiser");
  const KINDS = ["person", "scripted", "random", "model"];
  let shown = null;

  function seats() { return ($("with-d0").checked ? ["D0", "D1", "D2", "D3"] : ["D1", "D2", "D3"]).concat(["builder"]); }

  function seatRows() {
    const rows = S.clear($("seat-rows"));
    for (const seat of seats()) {
      const row = document.createElement("div");
      row.className = "seat-row";
      const name = document.createElement("span");
      name.className = "seat";
      name.textContent = seat;
      const kind = document.createElement("select");
      kind.id = "kind-" + seat;
      kind.setAttribute("aria-label", seat + ": who plays");
      for (const k of KINDS) { const o = document.createElement("option"); o.value = k; o.textContent = k === "model" ? "a model (litellm)" : k; kind.appendChild(o); }
      kind.value = seat === "builder" ? "scripted" : "person";
      const model = document.createElement("input");
      model.type = "text"; model.id = "model-" + seat; model.placeholder = "provider/model"; model.setAttribute("list", "model-list");
      model.setAttribute("aria-label", seat + ": model"); model.hidden = true;
      kind.addEventListener("change", () => { model.hidden = kind.value !== "model"; });
      const label = document.createElement("input");
      label.type = "text"; label.id = "label-" + seat; label.placeholder = "label (optional)"; label.maxLength = 80;
      label.setAttribute("aria-label", seat + ": label, such as a participant code");
      row.append(name, kind, model, label);
      rows.appendChild(row);
    }
  }

  function payload() {
    const kinds = {}, labels = {};
    for (const seat of seats()) {
      const kind = $("kind-" + seat).value;
      kinds[seat] = kind === "model" ? $("model-" + seat).value.trim() : kind;
      const label = $("label-" + seat).value.trim();
      if (label) labels[seat] = label;
    }
    const structures = $("structures").value.split(",").map((s) => s.trim()).filter((s) => s).map(Number);
    return {
      title: $("title").value.trim(), dataset: $("dataset").value, structures: structures,
      protocol: $("protocol").value, oracle_n: Number($("oracle_n").value), turns: Number($("turns").value),
      seed: Number($("seed").value), directors: seats().filter((s) => s !== "builder"), seats: kinds, labels: labels,
      timeout: Number($("timeout").value), on_timeout: $("on_timeout").value,
    };
  }

  function link(label, url) {
    const wrap = document.createElement("label");
    wrap.textContent = label;
    const input = document.createElement("input");
    input.type = "text"; input.readOnly = true; input.value = url;
    input.addEventListener("focus", () => input.select());
    wrap.appendChild(input);
    return wrap;
  }

  function gameRow(game) {
    const tr = document.createElement("tr");
    tr.setAttribute("data-game", game.id);
    const name = document.createElement("td");
    name.textContent = (game.title ? game.title + " " : "") + "(" + game.out + ")";
    const st = document.createElement("td");
    st.textContent = game.status + (game.status === "playing" ? ", structure " + game.game + "/" + game.games + ", turn " + game.turn +
      (game.acting ? ", " + game.acting + " to act" : "") + (game.late.length ? ", late: " + game.late.join(" ") : "") : "");
    for (const r of game.results) {
      const line = document.createElement("div");
      line.className = "muted";
      const progress = r.progress === null || r.progress === undefined ? "-" : Number(r.progress).toFixed(3);
      line.textContent = r.structure_id + ": " + r.status + ", " + r.turns + " turn(s), progress " + progress;
      st.appendChild(line);
    }
    const links = document.createElement("td");
    links.className = "links";
    const origin = window.location.origin;
    for (const seat in game.kinds) {
      const label = seat + ": " + game.kinds[seat] + (game.labels[seat] ? " (" + game.labels[seat] + ")" : "");
      if (game.tokens[seat]) links.appendChild(link(label, origin + "/play#seat=" + game.tokens[seat]));
      else { const p = document.createElement("div"); p.textContent = label; links.appendChild(p); }
    }
    links.appendChild(link("spectator (shows the target)", origin + "/play#watch=" + game.spectator));
    const act = document.createElement("td");
    if (!game.finished) {
      const stop = document.createElement("button");
      stop.type = "button"; stop.textContent = "Stop";
      stop.addEventListener("click", async () => { await S.api("POST", "/api/games/" + game.id + "/stop", token); refresh(); });
      act.appendChild(stop);
    }
    tr.append(name, st, links, act);
    return tr;
  }

  async function refresh() {
    const answer = await S.api("GET", "/api/games", token);
    if (!answer.ok) { $("trouble").textContent = answer.data.error; return; }
    const seen = JSON.stringify(answer.data.games);
    if (seen === shown) return;  // unchanged: the rows (and a link being copied) stay as they are
    shown = seen;
    const body = S.clear($("games"));
    for (const game of answer.data.games) body.appendChild(gameRow(game));
  }

  async function start() {
    const answer = await S.api("GET", "/api/options", token);
    if (!answer.ok) { $("trouble").textContent = answer.data.error || "the organiser's token was refused"; return; }
    const options = answer.data;
    for (const [id, values] of [["dataset", options.datasets], ["protocol", options.protocols]]) {
      for (const v of values) { const o = document.createElement("option"); o.value = v; o.textContent = v; $(id).appendChild(o); }
    }
    for (const m of options.models) { const o = document.createElement("option"); o.value = m; $("model-list").appendChild(o); }
    $("organiser").hidden = false;
    seatRows();
    $("with-d0").addEventListener("change", seatRows);
    $("setup").addEventListener("submit", async (e) => {
      e.preventDefault();
      $("trouble").textContent = ""; $("created").textContent = "";
      const created = await S.api("POST", "/api/games", token, payload());
      if (!created.ok) { $("trouble").textContent = created.data.error; return; }
      $("created").textContent = "Started game " + created.data.id + "; its links are in the list below.";
      refresh();
    });
    refresh();
    setInterval(refresh, 3000);
  }

  window.addEventListener("hashchange", () => window.location.reload());
  if (!token) { $("trouble").textContent = "Open the organiser's link that craft-env serve printed (it ends with #organiser=...)."; return; }
  start();
})();
