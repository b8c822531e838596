// SPDX-License-Identifier: GPL-3.0-or-later
// tools/site/katex.js: typeset the reader's edition's formulas with Debian's
// libjs-katex (tools/site/math.py runs it once per build).  Reads a JSON
// array of TeX strings on stdin; writes one JSON array, per formula
// {html, warnings, error}: KaTeX's HTML (no MathML), the strict mode's
// complaints (an unknown character), the parse error (html null).
'use strict';
const katex = require('/usr/share/javascript/katex/katex.js');
const texs = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = texs.map((tex) => {
  const warnings = [];
  try {
    const html = katex.renderToString(tex, {
      throwOnError: true, output: 'html',
      strict: (code, msg) => { warnings.push(code + ': ' + msg); return 'ignore'; },
    });
    return {html, warnings, error: null};
  } catch (e) {
    return {html: null, warnings, error: String(e.message)};
  }
});
process.stdout.write(JSON.stringify(out));
