// The course reader's script (./lab read; tools/lab/learner/reader.py builds
// the pages): the search over every lesson, the quiz with its progress kept in
// this browser (localStorage), and the quiz column of the contents page.
// Ours, and the only script of the lesson pages: nothing is loaded from a
// network.
"use strict";

(function () {
  const STORE = "mha-quiz:";  // + the lab's directory: {question id: [chosen option, ...]}

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

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ------------------------------------------------------------------ search
  // Every section of every lesson (assets/search_index.js); a hit needs every
  // word of the query, and ranks by how often they occur, headings first.
  function search(query) {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return [];
    const lang = document.documentElement.lang || "en";
    const hits = [];
    for (const s of window.SEARCH_INDEX || []) {
      const title = s.title.toLowerCase(), text = s.text.toLowerCase();
      let score = 0, ok = true;
      for (const w of words) {
        const inTitle = title.includes(w);
        const n = text.split(w).length - 1;
        if (!inTitle && !n) { ok = false; break; }
        score += (inTitle ? 10 : 0) + Math.min(n, 10);
      }
      if (ok) hits.push({s, score: score + (s.lang === lang ? 5 : 0)});
    }
    hits.sort((a, b) => b.score - a.score || a.s.lab - b.s.lab);
    return hits.slice(0, 12).map(h => h.s);
  }

  function snippet(text, word) {
    const i = text.toLowerCase().indexOf(word.toLowerCase());
    const from = Math.max(0, i - 60);
    return (from > 0 ? "\u2026" : "") + text.slice(from, from + 160) + "\u2026";
  }

  function setUpSearch() {
    const input = document.getElementById("search"), box = document.getElementById("hits");
    if (!input || !box) return;
    const root = document.body.dataset.root || "";
    input.addEventListener("input", () => {
      box.textContent = "";
      const q = input.value.trim();
      if (!q) return;
      const hits = search(q);
      if (!hits.length) {
        box.appendChild(el("p", {class: "none"}, "no lesson says \u201c" + q + "\u201d"));
        return;
      }
      for (const h of hits) {
        const a = el("a", {href: root + h.url, class: "hit"});
        a.appendChild(el("strong", {}, h.title + (h.lang !== "en" ? " (" + h.lang + ")" : "")));
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
  // labels()); these are the English ones, for a page built without them.
  const LABELS = {before: "Before you start", check: "Check your understanding",
                  after: "After the lab", right: "Right.", wrong: "Not quite.",
                  progress: "{right} of {total} answered right (kept in this browser)",
                  reset: "start this quiz over"};

  function fill(text, fields) {
    return text.replace(/\{(\w+)\}/g, (m, k) => (k in fields ? String(fields[k]) : m));
  }

  function setUpQuiz() {
    const data = document.getElementById("quiz-data");
    if (!data) return;
    const quiz = JSON.parse(data.textContent);
    const words = Object.assign({}, LABELS, quiz.labels || {});
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
        const why = el("p", {class: "why", hidden: ""},
                       (o.correct ? words.right : words.wrong) + " " + o.why);
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
      td.textContent = n ? n + " answered" : "";
    }
  }

  // The language switch remembers the choice for the contents page's links.
  function setUpLanguages() {
    for (const a of document.querySelectorAll(".langs a[data-lang]")) {
      a.addEventListener("click", () => {
        try { localStorage.setItem("mha-lang", a.dataset.lang); } catch (e) { /* none */ }
      });
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    setUpSearch();
    setUpQuiz();
    setUpContents();
    setUpLanguages();
  });
})();
