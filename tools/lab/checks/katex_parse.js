// ./lab test's formula check (tools/lab/checks/formulas.py): reads a JSON list
// of {"tex", "display"} on stdin, parses each with Debian's KaTeX (libjs-katex)
// as the reader's pages draw it (throwOnError, strict), and writes a JSON list
// of the same length: null where the formula parses, else KaTeX's message.
"use strict";
const katex = require(process.argv[2] || "/usr/share/javascript/katex/katex.js");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", chunk => { input += chunk; });
process.stdin.on("end", () => {
  const out = JSON.parse(input).map(f => {
    try {
      katex.renderToString(f.tex, {displayMode: f.display, throwOnError: true, strict: "error"});
      return null;
    } catch (e) {
      return String(e.message || e);
    }
  });
  process.stdout.write(JSON.stringify(out));
});
