// CRAFT leaderboard page (docs/leaderboard.md). Shows what craft_env.eval.leaderboard computed; every
// model name and logged text goes into the page through textContent or a title property, never as markup.
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("board-data").textContent);
  const draw = craftDrawing(DATA.colours);
  const el = draw.el;
  const svgEl = draw.svgEl;
  const ENTRIES = DATA.entries;
  const BY_KEY = new Map(ENTRIES.map((e) => [e.key, e]));
  const DASH = "\u2014";
  const CATEGORY_LABELS = {
    correct: "correct", layer: "layer error", span: "span error", wrong_colour: "wrong colour",
    wrong_position: "wrong position", other: "other",
  };
  const CATEGORY_COLOURS = {
    correct: "#3ea84a", layer: "#f48a1c", span: "#e6c229", wrong_colour: "#d9534f",
    wrong_position: "#8e6cc1", other: "#9a988e",
  };
  const PUBLISHED_EMPTY = "published row: the paper gives no value here (it has no logs)";
  const REPLAY_LINK = /^[A-Za-z0-9._~%/-]+#g=\d+&t=\d+$/;

  // ------------------------------------------------------------------ formatting

  function $(id) { return document.getElementById(id); }

  function missing(v) { return v === undefined || v === null || (typeof v === "number" && Number.isNaN(v)); }

  function fmt(v, digits) {
    if (missing(v)) return DASH;
    return typeof v === "number" ? v.toFixed(digits === undefined ? 3 : digits) : String(v);
  }

  function signed(v) { return missing(v) ? DASH : (v < 0 ? "\u2212" : "+") + Math.abs(v).toFixed(3); }

  function pm(mean, sem) {
    if (missing(mean)) return DASH;
    return missing(sem) ? fmt(mean) : fmt(mean) + " \u00b1 " + fmt(sem);
  }

  function isPublished(e) { return e.kind === "published"; }

  // ------------------------------------------------------------------ tooltip

  function showTip(node, text) {
    const tip = $("tip");
    tip.textContent = text;
    tip.hidden = false;
    const box = node.getBoundingClientRect();
    const left = Math.min(box.left, window.innerWidth - tip.offsetWidth - 8);
    tip.style.left = Math.max(4, left) + "px";
    const below = box.bottom + 6;
    tip.style.top = (below + tip.offsetHeight > window.innerHeight ? box.top - tip.offsetHeight - 6 : below) + "px";
    document.body.dataset.tip = text;
  }

  function hideTip() {
    $("tip").hidden = true;
    document.body.dataset.tip = "";
  }

  function withTip(node, text) {
    node.tabIndex = 0;
    node.addEventListener("mouseenter", () => showTip(node, text));
    node.addEventListener("focus", () => showTip(node, text));
    node.addEventListener("mouseleave", hideTip);
    node.addEventListener("blur", hideTip);
    return node;
  }

  // ------------------------------------------------------------------ state and permalink

  const state = { tab: "table", sort: "rank", desc: false, q: "", tag: "" };

  function parseHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    const tab = params.get("tab");
    state.tab = DATA.tabs.includes(tab) ? tab : "table";
    const sort = params.get("sort") || "rank";
    state.desc = sort.startsWith("-");
    state.sort = sort.replace(/^-/, "") || "rank";
    state.q = params.get("q") || "";
    const tag = params.get("tag") || "";
    state.tag = DATA.tags.includes(tag) ? tag : "";
  }

  function hashOf(next) {
    const params = new URLSearchParams();
    params.set("tab", next.tab);
    params.set("sort", (next.desc ? "-" : "") + next.sort);
    if (next.q) params.set("q", next.q);
    if (next.tag) params.set("tag", next.tag);
    return "#" + params.toString();
  }

  function update(patch) {
    const hash = hashOf(Object.assign({}, state, patch));
    if (location.hash === hash) render();
    else location.hash = hash;
  }

  function visible(entry) {
    if (state.tag && !entry.tags.includes(state.tag)) return false;
    if (!state.q) return true;
    const q = state.q.toLowerCase();
    return [entry.name, entry.key, entry.builder || ""].some((t) => String(t).toLowerCase().includes(q));
  }

  function groupRows(group) {
    return group.entries.map((k) => BY_KEY.get(k)).filter(visible);
  }

  // ------------------------------------------------------------------ sortable tables

  function compareBy(column) {
    return (a, b) => {
      const va = column.value(a), vb = column.value(b);
      const ma = missing(va), mb = missing(vb);
      if (ma || mb) return ma - mb || a.position - b.position;
      const cmp = column.text ? String(va).localeCompare(String(vb)) : va - vb;
      return (state.desc ? -cmp : cmp) || a.position - b.position;
    };
  }

  function sortRows(rows, columns) {
    const column = columns.find((c) => c.key === state.sort) || columns[0];
    return rows.slice().sort(compareBy(column));
  }

  function emptyCell(entry, className) {
    const td = el("td", (className || "") + " empty", DASH);
    td.title = isPublished(entry) ? PUBLISHED_EMPTY : "no value (nothing logged to compute it from)";
    return td;
  }

  function numberCell(column, entry) {
    const value = column.value(entry);
    if (missing(value)) return emptyCell(entry);
    if (column.sem) {
      const td = el("td", "", fmt(value));
      const sem = column.sem(entry);
      if (!missing(sem)) td.appendChild(el("span", "sem", " \u00b1" + fmt(sem)));
      return td;
    }
    const text = column.signed && !isPublished(entry) ? signed(value) : fmt(value, column.digits);
    const td = el("td", "", text);
    if (column.signed && isPublished(entry)) td.title = "printed without a sign in the paper's Table 1";
    return td;
  }

  function sortableTable(columns, rows, caption) {
    const table = el("table", "board");
    table.appendChild(el("caption", "sr-only", caption));
    const head = el("tr");
    for (const column of columns) {
      const th = el("th", column.text ? "text" : "", column.label);
      th.dataset.key = column.key;
      th.scope = "col";
      if (column.title) th.title = column.title;
      if (column.key === state.sort) th.classList.add(state.desc ? "sorted-desc" : "sorted-asc");
      th.addEventListener("click", () => {
        const desc = column.key === state.sort ? !state.desc : !column.text && column.key !== "rank";
        update({ sort: column.key, desc: desc });
      });
      head.appendChild(th);
    }
    table.appendChild(el("thead")).appendChild(head);
    const body = el("tbody");
    for (const entry of rows) {
      const tr = el("tr", entry.band % 2 === 0 ? "band-alt" : "");
      tr.dataset.key = entry.key;
      for (const column of columns) tr.appendChild(column.cell ? column.cell(entry) : numberCell(column, entry));
      body.appendChild(tr);
    }
    table.appendChild(body);
    return table;
  }

  function nameCell(entry) {
    const td = el("td", "text");
    td.appendChild(el("span", "name", entry.name));
    for (const tag of entry.tags) td.appendChild(el("span", "badge " + (tag === "published" ? "published" : ""), tag));
    const detail = isPublished(entry) ? "the paper's Table 1" : entry.kind + (entry.source ? ": " + entry.source : "");
    const sub = el("div", "sub", detail);
    if (entry.citation) sub.title = entry.citation;
    td.appendChild(sub);
    return td;
  }

  function textCell(value) {
    return (entry) => {
      const v = value(entry);
      return missing(v) ? emptyCell(entry, "text") : el("td", "text", v);
    };
  }

  function groupHeading(group, shown) {
    const h = el("h2", "", group.label);
    const paired = group.paired ? "" : " (no per-structure data: intervals from SEM)";
    h.appendChild(el("span", "hint", "  \u00b7 " + shown + " of " + group.entries.length +
      " rows \u00b7 ranked together: same dataset, protocol and condition" + paired));
    return h;
  }

  function anyOf(group, test) { return group.entries.some((k) => test(BY_KEY.get(k))); }

  // ------------------------------------------------------------------ table tab

  const TABLE_COLUMNS = [
    { key: "rank", label: "Rank", value: (e) => e.rank, digits: 0,
      title: "1 + the entries of the group better than this one with their whole 95% interval above zero" },
    { key: "name", label: "Entry", text: true, value: (e) => e.name, cell: nameCell },
    { key: "builder", label: "Builder", text: true, value: (e) => e.builder, cell: textCell((e) => e.builder),
      when: () => DATA.show_builder },
    { key: "runs", label: "Runs", value: (e) => e.runs, digits: 0 },
    { key: "games", label: "Games", value: (e) => e.games, digits: 0 },
    { key: "completed", label: "Completed", value: (e) => e.m.completed, title: "share of games completed" },
    { key: "progress", label: "Prog.", value: (e) => e.m.progress, sem: (e) => e.m.progress_sem },
    { key: "completion", label: "Comp.", value: (e) => e.m.completion, sem: (e) => e.m.completion_sem },
    { key: "position_accuracy", label: "Pos. Acc.", value: (e) => e.m.position_accuracy,
      sem: (e) => e.m.position_accuracy_sem },
    { key: "iou", label: "IoU", value: (e) => e.m.iou, sem: (e) => e.m.iou_sem },
    { key: "fail", label: "Fail", value: (e) => e.m.fail, sem: (e) => e.m.fail_sem },
    { key: "remove", label: "REMOVE", value: (e) => e.m.remove },
    { key: "gap", label: "Gap", value: (e) => e.m.gap, signed: true },
    { key: "followed_oracle", label: "Oracle adh.", value: (e) => e.m.followed_oracle,
      title: "share of turns where the builder played an oracle candidate" },
    { key: "simple", label: "S", value: (e) => e.split && e.split.simple, when: (g) => g.complexity,
      title: "mean progress on simple structures" },
    { key: "medium", label: "M", value: (e) => e.split && e.split.medium, when: (g) => g.complexity,
      title: "mean progress on medium structures" },
    { key: "complex", label: "C", value: (e) => e.split && e.split.complex, when: (g) => g.complexity,
      title: "mean progress on complex structures" },
    { key: "tokens", label: "Tokens", value: (e) => e.m.tokens, digits: 0,
      when: (g) => anyOf(g, (e) => e.m.tokens > 0) },
    { key: "cost", label: "Cost ($)", value: (e) => e.m.cost, digits: 4,
      when: (g) => anyOf(g, (e) => e.m.cost > 0) },
  ];

  function renderTable(root) {
    for (const group of DATA.groups) {
      const rows = groupRows(group);
      root.appendChild(groupHeading(group, rows.length));
      if (!rows.length) { root.appendChild(el("p", "hint", "no row matches")); continue; }
      const columns = TABLE_COLUMNS.filter((c) => !c.when || c.when(group));
      root.appendChild(sortableTable(columns, sortRows(rows, columns), "Table 1: " + group.label));
    }
  }

  // ------------------------------------------------------------------ rank bands tab

  function intervalText(entry) {
    const method = entry.ci_method === "paired bootstrap"
      ? "bootstrap over its structures (" + DATA.bootstrap.samples + " samples)" : "unpaired, mean \u00b1 1.96 SEM";
    return entry.label + "\nprogress " + fmt(entry.m.progress) + ", 95% interval [" + fmt(entry.ci[0]) + ", " +
      fmt(entry.ci[1]) + "]\n" + method;
  }

  function intervalCell(entry, scale) {
    const td = el("td", "interval");
    const width = 300, height = 18, x = (v) => 6 + (width - 12) * Math.min(Math.max((v - scale[0]) / (scale[1] - scale[0]), 0), 1);
    const root = svgEl("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height });
    root.appendChild(svgEl("line", { x1: 6, x2: width - 6, y1: height / 2, y2: height / 2, stroke: "#e4e2d8" }));
    if (!missing(entry.ci[0]) && !missing(entry.ci[1])) {
      root.appendChild(svgEl("line", { x1: x(entry.ci[0]), x2: x(entry.ci[1]), y1: height / 2, y2: height / 2,
        stroke: isPublished(entry) ? "#c08a00" : "#3b6fb6", "stroke-width": 4, "stroke-linecap": "round" }));
    }
    if (!missing(entry.m.progress)) {
      root.appendChild(svgEl("circle", { cx: x(entry.m.progress), cy: height / 2, r: 4.5, fill: "#26262c" }));
    }
    td.appendChild(withTip(root, intervalText(entry)));
    return td;
  }

  function deltaCell(entry, group) {
    const next = entry.next;
    if (!next) return el("td", "hint", "last of the group");
    const below = BY_KEY.get(group.entries[entry.position]);
    if (next.method === "not comparable") {
      return withTip(el("td", "delta hint", "not comparable"), entry.label + " \u2212 " + below.label +
        "\nnot comparable: " + (next.reason || "too few shared structures") + "\nthis pair never counts against a rank");
    }
    const separates = next.low > 0 || next.high < 0;
    const td = el("td", "delta" + (separates ? " sep" : ""),
      signed(next.diff) + "  [" + signed(next.low) + ", " + signed(next.high) + "]");
    const how = next.method === "paired bootstrap"
      ? "paired bootstrap over " + next.structures + " shared structures, runs resampled within each"
      : "unpaired: difference \u00b1 1.96 \u221a(SEM\u00b2 + SEM\u00b2)";
    const verdict = separates ? "the interval excludes zero: a new band starts below" :
      "the interval contains zero: same band";
    withTip(td, entry.label + " \u2212 " + below.label + "\n" + signed(next.diff) + ", 95% interval [" +
      signed(next.low) + ", " + signed(next.high) + "]\n" + how + "\n" + verdict);
    return td;
  }

  function renderBands(root) {
    root.appendChild(el("p", "hint", "Entries in rank order within each group. A band holds entries the data cannot " +
      "tell apart from their neighbour (the 95% interval of their difference in progress contains zero); the " +
      "rank is 1 + the number of entries better with the whole interval above zero. Hover an interval or a " +
      "difference for its numbers."));
    for (const group of DATA.groups) {
      const rows = groupRows(group).sort((a, b) => a.position - b.position);
      root.appendChild(groupHeading(group, rows.length));
      if (!rows.length) { root.appendChild(el("p", "hint", "no row matches")); continue; }
      const all = group.entries.map((k) => BY_KEY.get(k));
      const lows = all.map((e) => e.ci[0]).filter((v) => !missing(v));
      const highs = all.map((e) => e.ci[1]).filter((v) => !missing(v));
      const scale = [Math.max(0, Math.min(...lows, 1)), Math.min(1, Math.max(...highs, 0))];
      if (scale[1] - scale[0] < 0.05) { scale[0] = Math.max(0, scale[0] - 0.05); scale[1] = Math.min(1, scale[1] + 0.05); }
      const table = el("table", "board bands");
      table.appendChild(el("caption", "sr-only", "Rank bands: " + group.label));
      const head = el("tr");
      for (const label of ["Rank", "Band", "Entry", "Prog.", "95% interval of progress (" + fmt(scale[0], 2) + " \u2013 " +
          fmt(scale[1], 2) + ")", "Difference to the next [95% interval]"]) {
        head.appendChild(el("th", label === "Entry" ? "text" : "", label));
      }
      table.appendChild(el("thead")).appendChild(head);
      const body = el("tbody");
      for (const entry of rows) {
        const tr = el("tr", entry.band % 2 === 0 ? "band-alt" : "");
        tr.dataset.key = entry.key;
        tr.appendChild(el("td", "", String(entry.rank)));
        tr.appendChild(el("td", "", String(entry.band)));
        tr.appendChild(nameCell(entry));
        tr.appendChild(el("td", "", pm(entry.m.progress, entry.m.progress_sem)));
        tr.appendChild(intervalCell(entry, scale));
        tr.appendChild(deltaCell(entry, group));
        body.appendChild(tr);
      }
      table.appendChild(body);
      root.appendChild(table);
    }
  }

  // ------------------------------------------------------------------ structures tab

  function resultRow(result) {
    const entry = BY_KEY.get(result.entry);
    const tr = el("tr");
    tr.appendChild(el("td", "text", entry.label));
    const bar = el("td", "bar-cell");
    const meter = el("div", "meter");
    meter.style.width = (100 * Math.min(Math.max(result.progress, 0), 1)).toFixed(1) + "%";
    bar.appendChild(withTip(meter, entry.label + ": progress " + fmt(result.progress) + " over " + result.runs + " run(s)"));
    tr.appendChild(bar);
    tr.appendChild(el("td", "", fmt(result.progress)));
    const link = el("td");
    if (result.replay && REPLAY_LINK.test(result.replay)) {
      const a = el("a", "", "replay");
      a.href = result.replay;
      link.appendChild(a);
    }
    tr.appendChild(link);
    return tr;
  }

  function renderStructures(root) {
    if (!DATA.structures.length) root.appendChild(el("p", "hint", "No entry with per-structure results."));
    for (const section of DATA.structures) {
      root.appendChild(el("h2", "", "Dataset " + section.dataset + ": " + section.cards.length + " structures"));
      const cards = el("div", "cards");
      for (const card of section.cards) {
        const results = card.results.filter((r) => visible(BY_KEY.get(r.entry)));
        if (!results.length) continue;
        const box = el("article", "card");
        box.dataset.structure = card.key;
        const title = el("h3", "", card.key);
        if (card.complexity) title.appendChild(el("span", "badge", card.complexity));
        box.appendChild(title);
        box.appendChild(el("div", "sub", "mean progress over the entries shown here: " +
          fmt(results.reduce((s, r) => s + r.progress, 0) / results.length)));
        if (card.picture) {
          const pictures = el("div", "pictures");
          pictures.appendChild(draw.drawBoard(card.picture.n, card.picture.h, card.picture.target,
            { hidden: card.picture.hidden, px: 17 }));
          const walls = el("div", "walls");
          for (const seat in card.picture.walls) walls.appendChild(draw.drawWall(seat, card.picture.walls[seat], card.picture.h));
          pictures.appendChild(walls);
          box.appendChild(pictures);
        } else {
          box.appendChild(el("p", "hint", "target not available (its dataset is not readable here)"));
        }
        const table = el("table", "results");
        const body = el("tbody");
        for (const result of results) body.appendChild(resultRow(result));
        table.appendChild(body);
        box.appendChild(table);
        cards.appendChild(box);
      }
      root.appendChild(cards);
    }
  }

  // ------------------------------------------------------------------ failure analysis tab

  function legend() {
    const box = el("div", "legend");
    for (const name of DATA.categories) {
      const item = el("span");
      const swatch = el("span", "swatch");
      swatch.style.background = CATEGORY_COLOURS[name];
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(CATEGORY_LABELS[name]));
      box.appendChild(item);
    }
    return box;
  }

  function stackRow(entry) {
    const row = el("div", "stack-row");
    row.dataset.key = entry.key;
    const label = el("div", "stack-label", entry.label);
    label.title = entry.key;
    row.appendChild(label);
    const turns = entry.taxonomy ? entry.taxonomy.turns : 0;
    if (!turns) {
      row.appendChild(el("div", "stack none", isPublished(entry) ? "published: no taxonomy (no logs)" :
        "no turn with oracle candidates"));
      return row;
    }
    const stack = el("div", "stack");
    stack.setAttribute("aria-hidden", "true");
    for (const name of DATA.categories) {
      const share = entry.taxonomy[name];
      if (!share) continue;
      const seg = el("div", "seg");
      seg.dataset.category = name;
      seg.style.width = (100 * share).toFixed(2) + "%";
      seg.style.background = CATEGORY_COLOURS[name];
      stack.appendChild(withTip(seg, entry.label + "\n" + CATEGORY_LABELS[name] + ": " + fmt(share) + " of " + turns +
        " turns with oracle candidates"));
    }
    row.appendChild(stack);
    row.appendChild(el("div", "sub", "correct " + fmt(entry.taxonomy.correct)));
    return row;
  }

  function taxonomyTable(rows, group) {
    const table = el("table", "sr-only");
    table.appendChild(el("caption", "", "Failure taxonomy: " + group.label));
    const head = el("tr");
    for (const label of ["Entry", ...DATA.categories.map((c) => CATEGORY_LABELS[c]), "Turns"]) head.appendChild(el("th", "", label));
    table.appendChild(el("thead")).appendChild(head);
    const body = el("tbody");
    for (const entry of rows) {
      const tr = el("tr");
      tr.appendChild(el("td", "", entry.label));
      for (const name of DATA.categories) tr.appendChild(el("td", "", entry.taxonomy ? fmt(entry.taxonomy[name]) : DASH));
      tr.appendChild(el("td", "", entry.taxonomy ? String(entry.taxonomy.turns) : DASH));
      body.appendChild(tr);
    }
    table.appendChild(body);
    return table;
  }

  function renderFailures(root) {
    root.appendChild(el("p", "hint", "On turns where the oracle offered moves: what the builder's move was, " +
      "sorted by the correct rate. Hover a bar for its value."));
    root.appendChild(legend());
    for (const group of DATA.groups) {
      const correct = (e) => (e.taxonomy && e.taxonomy.turns ? e.taxonomy.correct : -1);
      const rows = groupRows(group).sort((a, b) => correct(b) - correct(a) || a.position - b.position);
      root.appendChild(groupHeading(group, rows.length));
      for (const entry of rows) root.appendChild(stackRow(entry));
      root.appendChild(taxonomyTable(rows, group));
    }
  }

  // ------------------------------------------------------------------ director behaviour tab

  function measure(name) { return (e) => e.behaviour && e.behaviour[name]; }

  function lambdas(entry) {
    if (!entry.credit) return null;
    const seats = Object.keys(entry.credit).filter((k) => k.startsWith("lambda_D")).sort();
    if (!seats.length || seats.every((k) => missing(entry.credit[k]))) return null;
    return seats.map((k) => k.slice("lambda_".length) + " " + fmt(entry.credit[k], 2)).join(" \u00b7 ");
  }

  const BEHAVIOUR_COLUMNS = [
    { key: "rank", label: "Rank", value: (e) => e.rank, digits: 0 },
    { key: "name", label: "Entry", text: true, value: (e) => e.name, cell: nameCell },
    { key: "teammate", label: "Teammate", value: measure("teammate"), title: DATA.teammate_formula },
    { key: "chatter", label: "Chatter", value: measure("chatter"),
      title: "share of director messages naming no block, position or layer" },
    { key: "broken_record", label: "Broken record", value: measure("broken_record"),
      title: "share of messages repeating the director's own message after a turn that left the board unchanged" },
    { key: "panic", label: "Panic", value: measure("panic"),
      title: "after a failed move or a turn that took the board further from the target, the share of next " +
        "messages that call for a reset or raise an alarm (start over, remove everything, STOP, wrong!)" },
    { key: "grounding", label: "Grounding", value: measure("grounding"),
      title: "share of director replies whose think or message names a board position" },
    { key: "recovery", label: "Recovery", value: measure("recovery"),
      title: "after a turn without progress, the share of next turns that make progress" },
    { key: "overthink", label: "Overthink", value: measure("overthink"), digits: 2,
      title: "characters of think text per character of message text" },
    { key: "judge_sg", label: "SG", value: (e) => e.judges && e.judges.SG, when: (g) => anyOf(g, (e) => e.judges),
      title: "spatial grounding judge mean (craft-env judge)" },
    { key: "judge_mm", label: "MM", value: (e) => e.judges && e.judges.MM, when: (g) => anyOf(g, (e) => e.judges),
      title: "mind modelling judge mean" },
    { key: "judge_ps", label: "PS", value: (e) => e.judges && e.judges.PS, when: (g) => anyOf(g, (e) => e.judges),
      title: "pragmatic sufficiency judge mean" },
    { key: "judge_model", label: "Judge", text: true, value: (e) => e.judges && e.judges.model,
      cell: textCell((e) => e.judges && e.judges.model), when: (g) => anyOf(g, (e) => e.judges) },
    { key: "lambda", label: "\u03bb", text: true, value: (e) => lambdas(e), cell: textCell(lambdas),
      title: "the builder's credit share of each director on oracle-correct turns (credit \u03bb)",
      when: (g) => anyOf(g, (e) => e.credit) },
    { key: "lambda_std", label: "\u03bb-std", value: (e) => e.credit && e.credit.lambda_std,
      title: "spread of the builder's credit over the directors (0: shared evenly)",
      when: (g) => anyOf(g, (e) => e.credit) },
  ];

  function renderBehaviour(root) {
    for (const group of DATA.groups) {
      const rows = groupRows(group);
      root.appendChild(groupHeading(group, rows.length));
      if (!rows.length) { root.appendChild(el("p", "hint", "no row matches")); continue; }
      const columns = BEHAVIOUR_COLUMNS.filter((c) => !c.when || c.when(group));
      root.appendChild(sortableTable(columns, sortRows(rows, columns), "Director behaviour: " + group.label));
    }
    root.appendChild(el("p", "hint", DATA.teammate_formula + ". Each measure is defined in docs/leaderboard.md; " +
      "hover a column title for a summary."));
  }

  // ------------------------------------------------------------------ page

  const RENDER = { table: renderTable, bands: renderBands, structures: renderStructures, failures: renderFailures,
    behaviour: renderBehaviour };

  function renderTags() {
    const box = $("tag-filter");
    box.replaceChildren();
    if (!DATA.tags.length) return;
    for (const tag of ["", ...DATA.tags]) {
      const button = el("button", "", tag || "all");
      button.type = "button";
      button.dataset.tag = tag;
      button.setAttribute("aria-pressed", String(state.tag === tag));
      button.addEventListener("click", () => update({ tag: tag }));
      box.appendChild(button);
    }
  }

  function renderNotes() {
    const notes = $("notes");
    notes.replaceChildren();
    notes.appendChild(el("p", "", "Rows are ranked only within their group (same dataset, protocol and condition). " +
      "Bands and ranks: seeded paired bootstrap over structures, runs resampled within, " + DATA.bootstrap.samples +
      " samples, 95% intervals; published rows have no per-structure data and get unpaired intervals from their SEM."));
    if (DATA.published.shown) {
      notes.appendChild(el("p", "", "Published rows: " + DATA.published.citation + " " + DATA.published.note));
    }
    notes.appendChild(el("p", "", DASH + " marks a value that does not exist for that row, never a zero."));
  }

  function render() {
    parseHash();
    hideTip();
    for (const button of document.querySelectorAll("#tabs button")) {
      button.setAttribute("aria-selected", String(button.dataset.tab === state.tab));
    }
    for (const tab of DATA.tabs) {
      const section = $("tab-" + tab);
      section.hidden = tab !== state.tab;
      section.replaceChildren();
    }
    RENDER[state.tab]($("tab-" + state.tab));
    if ($("search").value !== state.q) $("search").value = state.q;
    renderTags();
    const shown = ENTRIES.filter(visible).length;
    $("summary").textContent = ENTRIES.length + " entries in " + DATA.groups.length + " group(s)" +
      (shown !== ENTRIES.length ? ", " + shown + " shown" : "") + ".";
    document.body.dataset.tab = state.tab;
    document.body.dataset.sort = (state.desc ? "-" : "") + state.sort;
    document.body.dataset.q = state.q;
    document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
  }

  for (const button of document.querySelectorAll("#tabs button")) {
    button.addEventListener("click", () => update({ tab: button.dataset.tab }));
  }
  $("search").addEventListener("input", () => update({ q: $("search").value }));
  window.addEventListener("hashchange", render);
  renderNotes();
  render();
})();
