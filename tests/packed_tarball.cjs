// The tarball `npm pack` makes of this repository (what dist/ holds now), packed once per test run
// for the files that install it (run_once.cjs).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { once } = require('./run_once.cjs');

const root = path.resolve(__dirname, '..');

/** { tarball: its path, packed: npm pack's JSON entry for it (files, sizes) }. Leave it in place. */
function packedTarball() {
  const dir = once('npm-pack', (out) => {
    const json = execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    fs.writeFileSync(path.join(out, 'packed.json'), json);
  });
  const [packed] = JSON.parse(fs.readFileSync(path.join(dir, 'packed.json'), 'utf8'));
  return { tarball: path.join(dir, packed.filename), packed };
}

module.exports = { packedTarball };
