// The course reader's head viewer (heads/index.html): draws the view.json
// files the learner's programs wrote (lab 7's show_heads, lab 10's
// ablate_heads, lab 13's grow_induction_heads; format below). Pick a run, a
// layer and a head; hover a token (a query) to see the weight it puts on each
// key; the head's role and scores, its loss change when silenced, the
// composition scores between layers and the induction score over training
// when the run has them. Plain DOM and SVG, no library.
//
// view.json: {"kind": "heads_view", "program", "title", "tokens": [T],
//   "layers": [{"name", "heads": [{"weights": [T][T] (row = query),
//               "role"?, "scores"?: {name: number}, "loss_increase"?}]}],
//   "composition"?: {"q"|"k"|"v": [later head][earlier head]},
//   "induction_over_training"?: [{"label", "x": [step], "y": [score]}],
//   "block_len"?}
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
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
        s.title = "weight " + fmt(w);
      });
      let best = 0;
      weights[i].forEach((w, j) => { if (w > weights[i][best]) best = j; });
      out.textContent = "query " + i + " \u201c" + tokens[i] + "\u201d attends most to key " +
          best + " \u201c" + tokens[best] + "\u201d (" + fmt(weights[i][best]) + ")";
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
    const T = weights.length, c = Math.max(8, Math.min(26, Math.floor(420 / T)));
    const left = c >= 12 ? 76 : 0;
    const g = svg("svg", {width: left + T * c + 2, height: T * c + 2, class: "heatmap",
                          role: "img", "aria-label": "attention weights, rows queries"});
    for (let i = 0; i < T; ++i) {
      if (left) {
        const label = svg("text", {x: left - 6, y: 1 + i * c + c * 0.7, "text-anchor": "end",
                                   "font-size": Math.min(12, c - 2)});
        label.textContent = i + " " + tokens[i];
        g.appendChild(label);
      }
      for (let j = 0; j < T; ++j) {
        const w = weights[i][j] || 0;
        const r = svg("rect", {x: left + 1 + j * c, y: 1 + i * c, width: c, height: c,
                               fill: j > i ? "#e5e7eb" : "rgb(" + Math.round(255 - 218 * w) +
                               "," + Math.round(255 - 156 * w) + "," + Math.round(255 - 20 * w) +
                               ")"});
        const t = svg("title");
        t.textContent = "query " + i + " " + tokens[i] + ", key " + j + " " + tokens[j] + ": " +
            fmt(w);
        r.appendChild(t);
        g.appendChild(r);
      }
    }
    if (blockLen) {
      g.appendChild(svg("line", {x1: left, x2: left + T * c + 2, y1: 1 + blockLen * c,
                                 y2: 1 + blockLen * c, stroke: "#dc2626", "stroke-width": 1}));
    }
    const fig = el("figure");
    fig.appendChild(g);
    fig.appendChild(el("figcaption", {}, "rows: queries, columns: keys; dark = weight 1, grey: " +
                                         "masked (future key)" +
                                         (blockLen ? "; red line: the repeated half starts" : "")));
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
      t.textContent = isStep ? "step " + v : fmt(v);
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
      const runs = select("run", views.map(x => x.label + " (" + x.made + ")"),
                          i => { v = i; layer = 0; head = 0; render(); });
      runs.querySelector("select").value = String(v);
      runs.querySelector("select").id = "pick-run";
      const layers = select("layer", L.map(l => l.name), i => { layer = i; render(); });
      layers.querySelector("select").value = String(layer);
      layers.querySelector("select").id = "pick-layer";
      const heads = select("head", L[layer].heads.map((_, h) => "head " + h),
                           i => { head = i; render(); });
      heads.querySelector("select").value = String(head);
      heads.querySelector("select").id = "pick-head";
      controls.append(runs, layers, heads);

      const h = L[layer].heads[head];
      panel.textContent = "";
      panel.appendChild(el("h2", {}, view.title || view.program));
      const info = el("div", {class: "head-info"});
      info.appendChild(el("h3", {}, L[layer].name + ", head " + head +
                                        (h.role ? ": " + h.role : "")));
      const dl = el("dl");
      for (const [k, val] of Object.entries(h.scores || {})) {
        dl.appendChild(el("dt", {}, k));
        dl.appendChild(el("dd", {}, fmt(val)));
      }
      if (typeof h.loss_increase === "number") {
        dl.appendChild(el("dt", {}, "loss change when silenced"));
        dl.appendChild(el("dd", {class: "loss"}, (h.loss_increase >= 0 ? "+" : "") +
                                                     fmt(h.loss_increase) + " nats"));
      }
      info.appendChild(dl);
      panel.appendChild(info);
      const out = el("p", {class: "attends", id: "attends"},
                     "Hover a token: the shading is the weight that query puts on each key.");
      panel.appendChild(tokenRow(view.tokens, h.weights, out));
      panel.appendChild(out);
      panel.appendChild(heatmap(h.weights, view.tokens, view.block_len));
      if (view.composition) {
        const box = el("div", {class: "composition"});
        for (const k of ["k", "q", "v"]) {
          if (view.composition[k]) {
            box.appendChild(table(k.toUpperCase() + "-composition", "layer-2 head",
                                  "layer-1 head", view.composition[k]));
          }
        }
        panel.appendChild(el("h3", {}, "Composition scores between the layers"));
        panel.appendChild(box);
      }
      if (view.induction_over_training) {
        panel.appendChild(el("h3", {}, "Induction score over training"));
        panel.appendChild(lineChart(view.induction_over_training,
                                    "each layer-2 head's induction score (lab 7) by step"));
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
