// The course reader's script (./lab read; tools/lab/learner/reader_site.py
// builds the pages): the search over every lesson, the quiz with its progress
// kept in this browser (localStorage), the quiz column of the contents page,
// the language the learner chose (remembered, and opened by the front door),
// and the formulas (KaTeX, from Debian's libjs-katex, when the site has it).
// Ours: nothing is loaded from a network. Every word comes from the page's
// labels (<script id="labels">, in the page's language).
"use strict";

(function () {
  const STORE = "mha-quiz:";  // + the lab's directory: {question id: [chosen option, ...]}
  const LANG_KEY = "mha-lang";

  const {T, fill, el} = window.MHA;

  function load(key) {
    try {
      return JSON.parse(localStorage.getItem(STORE + key) || "{}") || {};
    } catch (e) {
      return {};
    }
  }

  function save(key, value) {
    try {
      localStorage.setItem(STORE + key, JSON.stringify(value));
    } catch (e) {
      // a browser that keeps nothing still shows the answers
    }
  }

  // ------------------------------------------------------------------ search
  // Every section of every lesson in every language (assets/search_index.js).
  // Text is compared folded: lower case, accents removed ("induccion" finds
  // "inducción"), and Turkish dotless ı read as i, the one Turkish letter
  // without a decomposition: "isi haritasi" typed on any keyboard finds "ısı
  // haritası", and "Işın" (capital I, dotless) finds "ışın". A query word of
  // Latin letters must occur in the section; one in Chinese (no spaces
  // between words) matches as a substring, or else by its character pairs
  // (most of them present). Hits in the page's language come first, then by
  // how often the words occur, headings first.
  const CJK = /[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]/;

  function fold(s) {
    return s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/ı/g, "i");
  }

  function count(text, w) {
    let n = 0;
    for (let i = text.indexOf(w); i >= 0 && n < 10; i = text.indexOf(w, i + w.length)) ++n;
    return n;
  }

  // A word's score in a section: 0 when it does not match.
  function wordScore(w, title, text) {
    const inTitle = title.includes(w);
    const n = count(text, w);
    if (inTitle || n) return (inTitle ? 10 : 0) + n;
    if (!CJK.test(w) || w.length < 3) return 0;
    const pairs = [];
    for (let i = 0; i + 1 < w.length; ++i) pairs.push(w.slice(i, i + 2));
    const found = pairs.filter(p => title.includes(p) || text.includes(p)).length;
    return found / pairs.length >= 0.6 ? found / pairs.length : 0;
  }

  function search(query, lang) {
    const words = fold(query).split(/\s+/).filter(Boolean);
    if (!words.length) return [];
    const hits = [];
    for (const s of window.SEARCH_INDEX || []) {
      if (!s.folded) s.folded = {title: fold(s.title), text: fold(s.text)};
      let score = 0;
      for (const w of words) {
        const k = wordScore(w, s.folded.title, s.folded.text);
        if (!k) { score = 0; break; }
        score += k;
      }
      if (score) hits.push({s, score, own: s.lang === lang ? 1 : 0});
    }
    hits.sort((a, b) => b.own - a.own || b.score - a.score || a.s.lab - b.s.lab);
    return hits.slice(0, 12).map(h => h.s);
  }

  function snippet(text, word) {
    const i = Math.max(0, fold(text).indexOf(fold(word)));
    const from = Math.max(0, i - 60);
    return (from > 0 ? "\u2026" : "") + text.slice(from, from + 160) + "\u2026";
  }

  function setUpSearch() {
    const input = document.getElementById("search"), box = document.getElementById("hits");
    if (!input || !box) return;
    const root = document.body.dataset.root || "";
    const lang = document.documentElement.lang || "en";
    input.addEventListener("input", () => {
      box.textContent = "";
      const q = input.value.trim();
      if (!q) return;
      const hits = search(q, lang);
      if (!hits.length) {
        box.appendChild(el("p", {class: "none"}, fill(T.no_hits || "\u201c{query}\u201d",
                                                       {query: q})));
        return;
      }
      for (const h of hits) {
        const a = el("a", {href: root + h.url, class: "hit", lang: h.lang});
        a.appendChild(el("strong", {}, h.title + (h.lang !== lang ? " (" + h.lang + ")" : "")));
        a.appendChild(el("span", {}, snippet(h.text, q.split(/\s+/)[0])));
        box.appendChild(a);
      }
    });
    input.addEventListener("keydown", e => {
      if (e.key === "Escape") { input.value = ""; box.textContent = ""; }
    });
  }

  // -------------------------------------------------------------------- quiz
  // The quiz's own words come with it, in the page's language (learner/quiz.py
  // labels()).
  function setUpQuiz() {
    const data = document.getElementById("quiz-data");
    if (!data) return;
    const quiz = JSON.parse(data.textContent);
    const words = quiz.labels;
    const box = document.querySelector("#quiz .questions");
    const progress = document.querySelector("#quiz .progress");
    const answers = load(quiz.key);

    function showProgress() {
      const right = quiz.questions.filter(q => (answers[q.id] || []).some(
          k => q.options[k] && q.options[k].correct)).length;
      progress.textContent = fill(words.progress, {right, total: quiz.questions.length});
    }

    for (const [qi, q] of quiz.questions.entries()) {
      const fs = el("fieldset", {class: "question", "data-id": q.id});
      fs.appendChild(el("legend", {}, words[q.stage] + " \u00b7 " + (qi + 1) + "/" +
                                          quiz.questions.length));
      fs.appendChild(el("p", {class: "q"}, q.question));
      const list = el("ol", {class: "options", type: "a"});
      q.options.forEach((o, k) => {
        const li = el("li");
        const b = el("button", {type: "button", class: "option", "data-k": String(k)}, o.text);
        // o.said: the verdict and the explanation, joined by the reader's Python
        // (quiz.said) as the page's language spaces them.
        const why = el("p", {class: "why", hidden: ""}, o.said);
        function reveal() {
          b.classList.add(o.correct ? "right" : "wrong");
          why.hidden = false;
          if (o.correct) fs.classList.add("done");
        }
        b.addEventListener("click", () => {
          const chosen = answers[q.id] || [];
          if (!chosen.includes(k)) chosen.push(k);
          answers[q.id] = chosen;
          save(quiz.key, answers);
          reveal();
          showProgress();
        });
        if ((answers[q.id] || []).includes(k)) reveal();
        li.appendChild(b);
        li.appendChild(why);
        list.appendChild(li);
      });
      fs.appendChild(list);
      box.appendChild(fs);
    }
    const reset = el("button", {type: "button", class: "reset"}, words.reset);
    reset.addEventListener("click", () => {
      save(quiz.key, {});
      location.reload();
    });
    box.appendChild(reset);
    showProgress();
  }

  // The contents page: each lab's quiz progress from this browser.
  function setUpContents() {
    for (const td of document.querySelectorAll("td.qp[data-key]")) {
      const n = Object.keys(load(td.dataset.key)).length;
      td.textContent = n ? fill(T.answered || "{n}", {n}) : "";
    }
  }

  // --------------------------------------------------------------- languages
  // A language chosen in the switch (or on the front door) is remembered; the
  // front door opens it, else the first of the browser's preferred languages
  // that the course has (es-MX -> es, pt-PT -> pt-BR), else lists them all.
  function remember(lang) {
    try { localStorage.setItem(LANG_KEY, lang); } catch (e) { /* none */ }
  }

  function remembered() {
    try { return localStorage.getItem(LANG_KEY); } catch (e) { return null; }
  }

  function preferred(ours, wanted) {
    for (const w of wanted) {
      const exact = ours.find(o => o.toLowerCase() === String(w).toLowerCase());
      if (exact) return exact;
      const primary = String(w).toLowerCase().split("-")[0];
      const same = ours.find(o => o.toLowerCase().split("-")[0] === primary);
      if (same) return same;
    }
    return null;
  }

  function setUpLanguages() {
    for (const a of document.querySelectorAll("a[data-lang]")) {
      a.addEventListener("click", () => remember(a.dataset.lang));
    }
    const chooser = document.querySelector("main.chooser");
    if (!chooser) return;
    const ours = Array.from(chooser.querySelectorAll("a[data-lang]"), a => a.dataset.lang);
    const stored = remembered();
    const lang = ours.includes(stored) ? stored :
        preferred(ours, navigator.languages || [navigator.language || ""]);
    if (lang) location.replace(lang + "/index.html" + location.hash);
  }

  // ---------------------------------------------------------------- formulas
  // Each <span class="math"> (or <div class="math display">) holds TeX;
  // KaTeX draws it where the site carries KaTeX. A formula that does not parse
  // stays as its TeX here: ./lab test's formula check fails on it first.
  function setUpMath() {
    if (!window.katex) return;
    for (const e of document.querySelectorAll(".math")) {
      try {
        window.katex.render(e.textContent, e, {displayMode: e.classList.contains("display"),
                                               throwOnError: true});
        e.classList.add("drawn");
      } catch (err) {
        e.classList.add("math-error");
      }
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    setUpLanguages();
    setUpSearch();
    setUpQuiz();
    setUpContents();
    setUpMath();
  });
})();
