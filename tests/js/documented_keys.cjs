// The keys an options interface documents, read from the package's own type declarations
// (dist/types/**/*.d.ts, parents of `extends` included): a "no false positive" test can then check
// that it passes every documented key, so a key added to an interface cannot be left untested.
const fs = require('node:fs');
const path = require('node:path');
const { root } = require('./helpers.cjs');

let declarations;
function readDeclarations() {
  const dir = path.join(root, 'dist/types');
  declarations ??= fs.readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.d.ts'))
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
  return declarations;
}

/** The sorted member names of `export interface name` and of the interfaces it extends. */
function documentedKeys(name) {
  const text = readDeclarations();
  const head = new RegExp(`^export interface ${name}(?:<[^>]*>)?(?: extends ([^{]+))? \\{$`, 'm').exec(text);
  if (!head) throw new Error(`no interface ${name} in dist/types`);
  const body = text.slice(head.index + head[0].length, text.indexOf('\n}', head.index));
  // Members sit at one level of indentation (4 spaces); deeper lines belong to member types.
  const keys = [...body.matchAll(/^ {4}(?:readonly )?(\w+)\??:/gm)].map((m) => m[1]);
  const parents = head[1] ? head[1].split(',').map((p) => p.trim().replace(/<.*$/, '')) : [];
  return [...new Set([...keys, ...parents.flatMap(documentedKeys)])].sort();
}

module.exports = { documentedKeys };
