// Shared by the served pages (docs/serve.md): the token from the link's #fragment, the JSON API, and
// long polling that reconnects by itself. Every text goes into the page through textContent.
function craftServe() {
  "use strict";

  function token(name) {
    const match = new RegExp("(?:^#|&)" + name + "=([A-Za-z0-9_-]+)").exec(window.location.hash);
    return match ? match[1] : null;
  }

  async function api(method, path, bearer, body) {
    const options = { method: method, headers: { "Authorization": "Bearer " + bearer }, cache: "no-store" };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    const response = await fetch(path, options);
    let data = null;
    try { data = await response.json(); } catch (error) { data = { error: "unreadable answer" }; }
    return { ok: response.ok, status: response.status, data: data };
  }

  // Calls onState(state) for every new state of the game; after a dropped connection it waits and asks
  // again from the start, so a refreshed page or a lost network rejoins with the whole state.
  function poll(bearer, onState, onTrouble) {
    let version = -1;
    async function loop() {
      for (;;) {
        try {
          const answer = await api("GET", "/api/state?since=" + version + "&wait=25", bearer);
          if (!answer.ok) {
            onTrouble(answer.data && answer.data.error ? answer.data.error : "error " + answer.status, answer.status);
            if (answer.status === 401) return;
            await pause(2000);
            continue;
          }
          onTrouble(null);
          version = answer.data.public.version;
          onState(answer.data);
        } catch (error) {
          onTrouble("connection lost; reconnecting...");
          version = -1;
          await pause(1500);
        }
      }
    }
    loop();
  }

  function pause(ms) { return new Promise((resolve) => setTimeout(resolve, ms)); }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  function text(id, value) { document.getElementById(id).textContent = value === undefined || value === null ? "" : String(value); }

  // Boards turned a quarter turn k times (the view only: cells keep their names).
  function turnCell(i, j, n, k) {
    for (let q = 0; q < k; q++) { const t = i; i = j; j = n - 1 - t; }
    return [i, j];
  }

  function turnBoxes(boxes, n, k) {
    return boxes.map((b) => {
      const a = turnCell(b[0], b[1], n, k), c = turnCell(b[4], b[5], n, k);
      return [a[0], a[1], b[2], b[3], c[0], c[1]];
    });
  }

  function heights(boxes, n) {
    const h = [];
    for (let i = 0; i < n; i++) h.push(new Array(n).fill(0));
    for (const b of boxes) {
      h[b[0]][b[1]] = Math.max(h[b[0]][b[1]], b[2] + 1);
      h[b[4]][b[5]] = Math.max(h[b[4]][b[5]], b[2] + 1);
    }
    return h;
  }

  // The colour of the top block of every cell (-1: empty), for the plan of the board.
  function tops(boxes, n) {
    const colour = [], level = [];
    for (let i = 0; i < n; i++) { colour.push(new Array(n).fill(-1)); level.push(new Array(n).fill(-1)); }
    for (const b of boxes) {
      for (const [i, j] of [[b[0], b[1]], [b[4], b[5]]]) {
        if (b[2] > level[i][j]) { level[i][j] = b[2]; colour[i][j] = b[3]; }
      }
    }
    return colour;
  }

  function conversation(list, entries) {
    clear(list);
    if (!entries.length) { const li = document.createElement("li"); li.className = "muted"; li.textContent = "(no messages yet)"; list.appendChild(li); }
    for (const entry of entries) {
      const li = document.createElement("li");
      const who = document.createElement("span");
      who.className = "who";
      who.textContent = "turn " + entry.turn + " " + entry.speaker + ":";
      li.appendChild(who);
      li.appendChild(document.createTextNode(entry.text));
      if (entry.speaker === "builder" && /\(failed:/.test(entry.text)) li.className = "failed";
      list.appendChild(li);
    }
    list.scrollTop = list.scrollHeight;
  }

  function results(node, pub) {
    clear(node);
    for (const r of pub.results) {
      const li = document.createElement("li");
      const progress = r.progress === null || r.progress === undefined ? "-" : Number(r.progress).toFixed(3);
      li.textContent = r.structure_id + ": " + r.status + ", " + r.turns + " turn(s), " +
        (r.completed ? "structure complete" : "not complete") + ", progress " + progress;
      node.appendChild(li);
    }
  }

  return { token: token, api: api, poll: poll, clear: clear, text: text, turnBoxes: turnBoxes, turnCell: turnCell,
           heights: heights, tops: tops, conversation: conversation, results: results };
}
