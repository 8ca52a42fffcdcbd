#!/usr/bin/env node
// Entry point: runs the compiled CLI (build with `npm run build`; `npm ci` builds through `prepare`).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(compiled)) {
  process.stderr.write('olmpub is not built yet: run "npm ci" (or "npm run build") in the repository first.\n');
  process.exit(3);
}
// A closed pipe (`olmpub ... | head`) is a normal end of output, not a crash.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}
const { main } = await import(compiled.href);
process.exitCode = await main(process.argv.slice(2));
