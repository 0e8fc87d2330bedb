'use strict';

// build copies src into dist with a banner, and writes a manifest.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const dist = path.join(root, 'dist');
fs.mkdirSync(dist, { recursive: true });
const files = fs.readdirSync(path.join(root, 'src')).filter((f) => f.endsWith('.js'));
for (const f of files) {
  const src = fs.readFileSync(path.join(root, 'src', f), 'utf8');
  fs.writeFileSync(path.join(dist, f), `/* greet build */\n${src}`);
}
const pkg = require(path.join(root, 'package.json'));
const manifest = { version: pkg.version, files };
fs.writeFileSync(path.join(dist, 'build.json'), JSON.stringify(manifest, null, 2) + '\n');
console.log(`built ${files.length} files into dist/`);
