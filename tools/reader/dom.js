// What the course reader's scripts share (reader.js, heads.js,
// playground.js): the page's labels, in its language (<script id="labels">,
// tools/lab/learner/reader_labels.py), a label with its {fields} filled in,
// DOM and SVG elements, and the colour of an attention weight. Loaded first
// on every page, as window.MHA.
"use strict";

window.MHA = (function () {
  const SVG = "http://www.w3.org/2000/svg";

  function labels() {
    const e = document.getElementById("labels");
    try {
      return e ? JSON.parse(e.textContent) : {};
    } catch (err) {
      return {};
    }
  }

  // A label with its {fields} filled in ("query {i}" -> "query 3").
  function fill(text, fields) {
    return String(text || "").replace(/\{(\w+)\}/g, (m, k) => (k in fields ? String(fields[k]) : m));
  }

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

  // A weight in [0, 1] as a heat-map cell's colour: white to dark blue.
  function heat(w) {
    return "rgb(" + Math.round(255 - 218 * w) + "," + Math.round(255 - 156 * w) + "," +
        Math.round(255 - 20 * w) + ")";
  }

  return {T: labels(), fill, el, svg, heat};
})();
