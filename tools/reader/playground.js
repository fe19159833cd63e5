// The course reader's Mini-GPT playground (<lang>/playground.html): the
// learner's own lab 15 model, computed by lab 15's playground program that
// ./lab read started (learner/playground.py), reached through ./lab read's
// server with the session's token (meta "mha-session"). Type or click
// tokens; see the next-token probabilities after each one, a greedy or
// sampled continuation, every head's attention, and switch heads off. Every
// word comes from the page's labels (its language). Plain DOM and SVG.
//
// GET  api/playground/status?lang=L  -> {"state", ...; when ready: "vocab",
//      "config", "examples": [{"prompt": [tokens], "answer", "category"}],
//      "params", "seed", "file"}
// POST api/playground/run {"tokens", "off": [[block, head]], "mode",
//      "temperature", "top_k", "seed", "max_new"} -> {"tokens", "positions":
//      [{"top": [[token, p]]}], "last": [p by id], "attention": [block][head]
//      [T][T], "labels": [block][head], "continuation": [tokens]} or {"error"}
"use strict";

(function () {
  const {T, fill, el, svg, heat} = window.MHA;
  const lang = document.documentElement.lang || "en";
  const root = document.body.dataset.root || "../";
  const meta = document.querySelector('meta[name="mha-session"]');
  const token = meta ? meta.content : "";
  const percent = new Intl.NumberFormat(lang, {style: "percent", maximumFractionDigits: 1});

  function $(id) { return document.getElementById(id); }

  function pct(p) { return percent.format(p); }

  // ---------------------------------------------------------------- the server
  async function call(path, body) {
    const init = {headers: {"X-MHA-Token": token}, cache: "no-store"};
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const r = await fetch(root + "api/playground/" + path, init);
    let data = {};
    try { data = await r.json(); } catch (e) { /* an empty answer */ }
    return {status: r.status, data};
  }

  // ---------------------------------------------------------------- the state
  let info = null;           // the ready status: vocab, config, examples
  let off = new Set();       // "block.head" of the heads switched off
  let watch = null;          // {token, base}: the token whose probability is followed
  let busy = false, again = false, timer = null;

  function showStatus(s) {
    const box = $("pg-status");
    box.textContent = "";
    box.className = "status-line " + (s.state || "");
    const fields = Object.assign({}, s);
    if (typeof s.params === "number") fields.params = s.params.toLocaleString(lang);
    const p = el("p", {}, fill(T["pg_" + s.state] || s.state, fields));
    box.appendChild(p);
    if (s.command) box.appendChild(el("pre", {}, s.command));
  }

  async function poll() {
    if (!token || token.startsWith("@@")) {
      showStatus({state: "offline"});
      return;
    }
    let r;
    try {
      r = await call("status?lang=" + encodeURIComponent(lang));
    } catch (e) {
      showStatus({state: "offline"});
      return;
    }
    if (r.status !== 200) {
      showError(r.data);
      return;
    }
    showStatus(r.data);
    if (r.data.state === "starting" || r.data.state === "building") {
      setTimeout(poll, 1500);
      return;
    }
    if (r.data.state === "ready") start(r.data);
  }

  function showError(data) {
    const box = $("pg-error");
    const e = data || {};
    let text = fill(T["err_" + e.error] || e.detail || e.error || "?", e);
    if (e.error === "unknown_token" && e.suggestion) text += " " + fill(T.err_suggest, e);
    if (e.error === "crashed" || e.error === "not_ready") setTimeout(poll, 500);
    box.textContent = text;
    box.hidden = false;
  }

  // -------------------------------------------------------------- the inputs
  function request() {
    const mode = document.querySelector('input[name="pg-mode"]:checked').value;
    return {tokens: $("pg-prompt").value, mode,
            off: Array.from(off, k => k.split(".").map(Number)),
            temperature: Number($("pg-temperature").value),
            top_k: Number($("pg-top-k").value), seed: Number($("pg-seed").value),
            max_new: Number($("pg-max-new").value)};
  }

  function soon() {
    clearTimeout(timer);
    timer = setTimeout(run, 150);
  }

  async function run() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const r = await call("run", request());
      if (r.status === 200) {
        $("pg-error").hidden = true;
        draw(r.data);
      } else {
        showError(r.status === 403 ? Object.assign({error: "forbidden"}, r.data) : r.data);
      }
    } catch (e) {
      showStatus({state: "offline"});
    } finally {
      busy = false;
      if (again) { again = false; run(); }
    }
  }

  function start(status) {
    info = status;
    $("pg-main").hidden = false;
    const vocab = $("pg-vocab");
    vocab.textContent = "";
    info.vocab.forEach((t, i) => {
      const b = el("button", {type: "button", class: "tok", "data-id": String(i)}, t);
      b.addEventListener("click", () => {
        const p = $("pg-prompt");
        p.value = (p.value.trim() + " " + t).trim();
        soon();
      });
      vocab.appendChild(b);
    });
    const list = $("pg-examples");
    list.textContent = "";
    info.examples.forEach((x, k) => {
      const li = el("li", {class: "pg-example", "data-k": String(k)});
      const prompt = x.prompt.filter(t => t !== "<bos>");
      const shown = prompt.length > 9 ? "\u2026 " + prompt.slice(-9).join(" ") : prompt.join(" ");
      const b = el("button", {type: "button", class: "pg-try"}, shown);
      b.addEventListener("click", () => {
        $("pg-prompt").value = prompt.join(" ");
        watch = {token: x.answer, base: null, example: k};
        soon();
      });
      li.appendChild(b);
      li.appendChild(el("span", {class: "pg-cat"}, T["cat_" + x.category] || x.category));
      li.appendChild(el("span", {class: "pg-answer"}, fill(T.pg_answer, {token: x.answer})));
      li.appendChild(el("span", {class: "pg-model"}));
      list.appendChild(li);
    });
    if (!$("pg-prompt").value) $("pg-prompt").value = $("pg-prompt").placeholder;
    run();
  }

  // ------------------------------------------------------------------ drawing
  function bars(box, top) {
    box.textContent = "";
    for (const [t, p] of top) {
      const row = el("div", {class: "pg-bar"});
      row.appendChild(el("span", {class: "tok"}, t));
      const bar = el("span", {class: "fill"});
      bar.style.width = (p * 100).toFixed(1) + "%";
      const track = el("span", {class: "track"});
      track.appendChild(bar);
      row.appendChild(track);
      row.appendChild(el("span", {class: "p"}, pct(p)));
      box.appendChild(row);
    }
  }

  function draw(a) {
    const last = a.positions[a.positions.length - 1].top;
    bars($("pg-last"), last);
    // The token followed: the example's answer, else the top one with every head on.
    const id = t => info.vocab.indexOf(t);
    if (!watch || (watch.example === undefined && off.size === 0)) {
      watch = {token: last[0][0], base: null};
    }
    const p = a.last[id(watch.token)];
    if (off.size === 0) watch.base = p;
    $("pg-watch").dataset.p = String(p);   // the full number, for a test to compare
    $("pg-watch").textContent = fill(T.pg_watch, {token: watch.token, p: pct(p)}) +
        (off.size && watch.base !== null ? " (" + pct(watch.base) + ")" : "");
    if (watch.example !== undefined) {
      const li = document.querySelector('.pg-example[data-k="' + watch.example + '"] .pg-model');
      if (li) li.textContent = fill(T.pg_model_says, {token: last[0][0], p: pct(p)});
    }
    const pos = $("pg-positions");
    pos.textContent = "";
    a.tokens.forEach((t, i) => {
      const col = el("div", {class: "pg-position"});
      col.appendChild(el("div", {class: "pg-after"}, fill(T.pg_after, {token: t})));
      const b = el("div", {class: "pg-bars small"});
      bars(b, a.positions[i].top.slice(0, 3));
      col.appendChild(b);
      pos.appendChild(col);
    });
    const mode = request().mode;
    $("pg-continuation").textContent = fill(T.pg_continuation_seed, {
      mode: mode === "greedy" ? T.pg_greedy : T.pg_sample, seed: a.seed}) + " " +
      (a.continuation.length ? a.continuation.join(" ") : T.pg_ended);
    drawHeads(a);
  }

  function drawHeads(a) {
    const grid = $("pg-heads");
    grid.textContent = "";
    const n = a.tokens.length, c = Math.max(6, Math.min(16, Math.floor(230 / n)));
    a.attention.forEach((block, b) => block.forEach((w, h) => {
      const key = b + "." + h;
      const fig = el("figure", {class: "pg-head" + (off.has(key) ? " off" : ""),
                                "data-head": key});
      const cap = el("figcaption");
      const box = el("input", {type: "checkbox", "aria-label": fill(T.pg_block_head, {
        b: b + 1, h}) + " " + T.pg_off});
      box.checked = off.has(key);
      box.addEventListener("change", () => {
        if (box.checked) off.add(key); else off.delete(key);
        soon();
      });
      const label = el("label");
      label.appendChild(box);
      label.appendChild(document.createTextNode(" " + T.pg_off));
      cap.appendChild(el("strong", {}, fill(T.pg_block_head, {b: b + 1, h})));
      const role = a.labels[b][h];
      cap.appendChild(el("span", {class: "role"}, T["role_" + role] || role));
      cap.appendChild(label);
      fig.appendChild(cap);
      const g = svg("svg", {width: n * c + 2, height: n * c + 2, role: "img",
                            "aria-label": T.heatmap_aria});
      for (let i = 0; i < n; ++i) {
        for (let j = 0; j <= i; ++j) {
          const v = w[i][j];
          const r = svg("rect", {x: 1 + j * c, y: 1 + i * c, width: c, height: c,
                                 fill: heat(v)});
          const text = fill(T.cell, {i, q: a.tokens[i], j, k: a.tokens[j], w: v.toFixed(3)});
          const tip = svg("title");
          tip.textContent = text;
          r.appendChild(tip);
          r.addEventListener("mouseenter", () => { $("pg-hover").textContent = text; });
          g.appendChild(r);
        }
      }
      fig.appendChild(g);
      grid.appendChild(fig);
    }));
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("pg-prompt").addEventListener("input", () => {
      if (watch && watch.example !== undefined) watch = null;
      soon();
    });
    $("pg-clear").addEventListener("click", () => { $("pg-prompt").value = ""; soon(); });
    $("pg-back").addEventListener("click", () => {
      const words = $("pg-prompt").value.trim().split(/\s+/);
      words.pop();
      $("pg-prompt").value = words.join(" ");
      soon();
    });
    $("pg-new-seed").addEventListener("click", () => {
      $("pg-seed").value = String(Math.floor(Math.random() * 2147483647));
      soon();
    });
    $("pg-all-on").addEventListener("click", () => { off.clear(); soon(); });
    for (const id of ["pg-temperature", "pg-top-k", "pg-seed", "pg-max-new"]) {
      $(id).addEventListener("input", soon);
    }
    for (const r of document.querySelectorAll('input[name="pg-mode"]')) {
      r.addEventListener("change", soon);
    }
    poll();
  });
})();
