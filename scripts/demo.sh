#!/usr/bin/env bash
# npm run demo: installs what is missing, builds the library and the demo site (build/web/), then
# serves it on localhost and prints the URL. PORT=<n> picks the port (default 8080).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/bootstrap.sh
SKIP_BOOTSTRAP=1 bash scripts/build.sh
node scripts/build_web.mjs

exec node - <<'EOF'
const { serve } = require(process.cwd() + '/scripts/static_server.cjs');
const port = Number(process.env.PORT || 8080);
serve('build/web', { port }).then(({ server, url }) => {
  console.log(`\nDemo:          ${url}/`);
  console.log(`Embed example: ${url}/embed-example.html`);
  console.log('Press Ctrl+C to stop.');
  server.on('error', (e) => { console.error(e.message); process.exit(1); });
});
process.on('uncaughtException', (e) => {
  if (e.code === 'EADDRINUSE') console.error(`Port ${port} is in use: run PORT=<another port> npm run demo`);
  else console.error(e);
  process.exit(1);
});
process.on('SIGINT', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
EOF
