'use strict';

// lint fails on lines longer than 100 characters and on tabs.
const fs = require('node:fs');
const path = require('node:path');

let problems = 0;
for (const dir of ['src', 'test', 'scripts']) {
  for (const f of fs.readdirSync(dir)) {
    const p = path.join(dir, f);
    fs.readFileSync(p, 'utf8').split('\n').forEach((line, i) => {
      if (line.length > 100 || line.includes('\t')) {
        console.log(`${p}:${i + 1}: style`);
        problems++;
      }
    });
  }
}
console.log(`lint: ${problems} problems`);
process.exit(problems ? 1 : 0);
