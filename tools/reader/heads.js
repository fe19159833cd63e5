// The course reader's head viewer (<lang>/heads.html): draws the view.json
// files the learner's programs wrote (lab 7's show_heads, lab 10's
// ablate_heads, lab 13's grow_induction_heads; format below). Pick a run, a
// layer and a head; hover a token (a query) to see the weight it puts on each
// key; the head's role and scores, its loss change when silenced, the
// composition scores between layers and the induction score over training
// when the run has them. Plain DOM and SVG, no library; every word from the
// page's labels (its language).
//
// view.json: {"kind": "heads_view", "program", "title", "tokens": [T],
//   "layers": [{"name", "heads": [{"weights": [T][T] (row = query),
//               "role"?, "scores"?: {name: number}, "loss_increase"?}]}],
//   "composition"?: {"q"|"k"|"v": [later head][earlier head]},
//   "induction_over_training"?: [{"label", "x": [step], "y": [score]}],
//   "block_len"?}
"use strict";

(function () {
  const {T, fill, el, svg, heat} = window.MHA;

  // Lab 7's label of a head, a score's name and a layer's, in the page's
  // language (a name the labels lack stays as the program wrote it).
  function role(name) {
    return T["role_" + name] || name;
  }

  function scoreName(name) {
    return (T.score_names || {})[name] || name;
  }

  function layerName(name) {
    const m = /^layer (\d+)$/.exec(name);
    return m && T.layer_n ? fill(T.layer_n, {n: m[1]}) : name;
  }

  function fmt(v) {
    return typeof v === "number" ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(3)) : "\u2013";
  }

  function select(label, options, onChange) {
    const wrap = el("label", {}, label + " ");
    const s = el("select");
    options.forEach((o, i) => s.appendChild(el("option", {value: String(i)}, o)));
    s.addEventListener("change", () => onChange(Number(s.value)));
    wrap.appendChild(s);
    return wrap;
  }

  // The tokens as a row; hovering one shades every key by its weight.
  function tokenRow(tokens, weights, out) {
    const row = el("div", {class: "tokens", role: "list"});
    const spans = tokens.map((t, i) => {
      const s = el("span", {class: "tok", role: "listitem", tabindex: "0", "data-i": String(i)},
                   t);
      row.appendChild(s);
      return s;
    });
    function show(i) {
      spans.forEach((s, j) => {
        const w = weights[i][j] || 0;
        s.style.background = "rgba(37, 99, 235, " + Math.min(1, w * 1.2).toFixed(3) + ")";
        s.style.color = w > 0.45 ? "white" : "";
        s.classList.toggle("query", j === i);
        s.title = fill(T.weight, {w: fmt(w)});
      });
      let best = 0;
      weights[i].forEach((w, j) => { if (w > weights[i][best]) best = j; });
      out.textContent = fill(T.attends_most, {i, q: tokens[i], j: best, k: tokens[best],
                                              w: fmt(weights[i][best])});
    }
    spans.forEach((s, i) => {
      s.addEventListener("mouseenter", () => show(i));
      s.addEventListener("focus", () => show(i));
    });
    return row;
  }

  // The (T, T) weights as a grid of cells, rows queries, columns keys, each
  // row labelled with its token.
  function heatmap(weights, tokens, blockLen) {
    const n = weights.length, c = Math.max(8, Math.min(26, Math.floor(420 / n)));
    const left = c >= 12 ? 76 : 0;
    const g = svg("svg", {width: left + n * c + 2, height: n * c + 2, class: "heatmap",
                          role: "img", "aria-label": T.heatmap_aria});
    for (let i = 0; i < n; ++i) {
      if (left) {
        const label = svg("text", {x: left - 6, y: 1 + i * c + c * 0.7, "text-anchor": "end",
                                   "font-size": Math.min(12, c - 2)});
        label.textContent = i + " " + tokens[i];
        g.appendChild(label);
      }
      for (let j = 0; j < n; ++j) {
        const w = weights[i][j] || 0;
        const r = svg("rect", {x: left + 1 + j * c, y: 1 + i * c, width: c, height: c,
                               fill: j > i ? "#e5e7eb" : heat(w)});
        const t = svg("title");
        t.textContent = fill(T.cell, {i, q: tokens[i], j, k: tokens[j], w: fmt(w)});
        r.appendChild(t);
        g.appendChild(r);
      }
    }
    if (blockLen) {
      g.appendChild(svg("line", {x1: left, x2: left + n * c + 2, y1: 1 + blockLen * c,
                                 y2: 1 + blockLen * c, stroke: "#dc2626", "stroke-width": 1}));
    }
    const fig = el("figure");
    fig.appendChild(g);
    fig.appendChild(el("figcaption", {}, T.heatmap_caption + (blockLen ? T.heatmap_block : "")));
    return fig;
  }

  function table(title, rowName, colName, m) {
    const t = el("table", {class: "matrix"});
    t.appendChild(el("caption", {}, title));
    const head = el("tr");
    head.appendChild(el("th", {}, rowName + " \\ " + colName));
    m[0].forEach((_, a) => head.appendChild(el("th", {}, colName + " " + a)));
    t.appendChild(head);
    m.forEach((row, b) => {
      const tr = el("tr");
      tr.appendChild(el("th", {}, rowName + " " + b));
      row.forEach(v => {
        const td = el("td", {}, fmt(v));
        td.style.background = "rgba(37, 99, 235, " + Math.min(0.8, Math.abs(v)).toFixed(2) + ")";
        tr.appendChild(td);
      });
      t.appendChild(tr);
    });
    return t;
  }

  function lineChart(series, title) {
    const W = 460, H = 220, L = 44, B = 30;
    const xs = series.flatMap(s => s.x), ys = series.flatMap(s => s.y).filter(v => v !== null);
    const x0 = Math.min(...xs), x1 = Math.max(...xs) || 1, y1 = Math.max(1e-9, ...ys);
    const X = x => L + (W - L - 10) * (x - x0) / ((x1 - x0) || 1);
    const Y = y => H - B - (H - B - 10) * y / y1;
    const g = svg("svg", {width: W, height: H, class: "chart", role: "img", "aria-label": title});
    g.appendChild(svg("line", {x1: L, x2: W - 10, y1: H - B, y2: H - B, stroke: "#555"}));
    g.appendChild(svg("line", {x1: L, x2: L, y1: 10, y2: H - B, stroke: "#555"}));
    const colors = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2"];
    series.forEach((s, k) => {
      const d = s.x.map((x, i) => (i ? "L" : "M") + X(x).toFixed(1) + "," + Y(s.y[i]).toFixed(1));
      g.appendChild(svg("path", {d: d.join(" "), fill: "none", stroke: colors[k % 6],
                                 "stroke-width": 2}));
      const t = svg("text", {x: L + 6, y: 22 + 14 * k, fill: colors[k % 6], "font-size": 12});
      t.textContent = s.label;
      g.appendChild(t);
    });
    for (const [v, x, y, anchor, isStep] of [[x0, L, H - 10, "start", 1],
                                             [x1, W - 10, H - 10, "end", 1],
                                             [y1, L - 4, 16, "end", 0], [0, L - 4, H - B, "end", 0]]) {
      const t = svg("text", {x, y, "font-size": 11, "text-anchor": anchor});
      t.textContent = isStep ? fill(T.step, {n: v}) : fmt(v);
      g.appendChild(t);
    }
    const fig = el("figure");
    fig.appendChild(g);
    fig.appendChild(el("figcaption", {}, title));
    return fig;
  }

  function draw(root, views) {
    let v = 0, layer = 0, head = 0;
    const controls = el("div", {class: "controls"});
    const panel = el("div", {class: "panel"});
    root.appendChild(controls);
    root.appendChild(panel);

    function render() {
      const view = views[v].data;
      const L = view.layers || [];
      layer = Math.min(layer, L.length - 1);
      head = Math.min(head, L[layer].heads.length - 1);
      controls.textContent = "";
      const runs = select(T.run, views.map(x => x.label + " (" + x.made + ")"),
                          i => { v = i; layer = 0; head = 0; render(); });
      runs.querySelector("select").value = String(v);
      runs.querySelector("select").id = "pick-run";
      const layers = select(T.layer, L.map(l => layerName(l.name)), i => { layer = i; render(); });
      layers.querySelector("select").value = String(layer);
      layers.querySelector("select").id = "pick-layer";
      const heads = select(T.head, L[layer].heads.map((_, h) => fill(T.head_n, {h})),
                           i => { head = i; render(); });
      heads.querySelector("select").value = String(head);
      heads.querySelector("select").id = "pick-head";
      controls.append(runs, layers, heads);

      const h = L[layer].heads[head];
      panel.textContent = "";
      panel.appendChild(el("h2", {}, view.title || view.program));
      const info = el("div", {class: "head-info"});
      info.appendChild(el("h3", {}, fill(T.layer_head, {layer: layerName(L[layer].name), h: head}) +
                                        (h.role ? ": " + role(h.role) : "")));
      const dl = el("dl");
      for (const [k, val] of Object.entries(h.scores || {})) {
        dl.appendChild(el("dt", {}, scoreName(k)));
        dl.appendChild(el("dd", {}, fmt(val)));
      }
      if (typeof h.loss_increase === "number") {
        dl.appendChild(el("dt", {}, T.loss_change));
        dl.appendChild(el("dd", {class: "loss"}, fill(T.nats, {
          v: (h.loss_increase >= 0 ? "+" : "") + fmt(h.loss_increase)})));
      }
      info.appendChild(dl);
      panel.appendChild(info);
      const out = el("p", {class: "attends", id: "attends"}, T.hover);
      panel.appendChild(tokenRow(view.tokens, h.weights, out));
      panel.appendChild(out);
      panel.appendChild(heatmap(h.weights, view.tokens, view.block_len));
      if (view.composition) {
        const box = el("div", {class: "composition"});
        for (const k of ["k", "q", "v"]) {
          if (view.composition[k]) {
            box.appendChild(table(fill(T.composition_table, {kind: k.toUpperCase()}),
                                  T.later_head, T.earlier_head, view.composition[k]));
          }
        }
        panel.appendChild(el("h3", {}, T.composition));
        panel.appendChild(box);
      }
      if (view.induction_over_training) {
        panel.appendChild(el("h3", {}, T.induction_title));
        panel.appendChild(lineChart(view.induction_over_training, T.induction_caption));
      }
    }
    render();
  }

  document.addEventListener("DOMContentLoaded", () => {
    const views = JSON.parse(document.getElementById("views-data").textContent);
    const root = document.getElementById("viewer");
    if (!views.length) {
      document.getElementById("no-views").hidden = false;
      return;
    }
    const wanted = location.hash.slice(1);
    const first = views.findIndex(x => x.id === wanted);
    if (first > 0) views.unshift(views.splice(first, 1)[0]);
    draw(root, views);
  });
})();
