// What the Node client tests (openai_client/, anthropic_client/) share: the
// command line, a small random-weight model with a chat template, starting
// `met serve` and reading its listening line, and running a list of named
// checks then stopping the server (SIGTERM must exit 0). Exit codes: 0 every
// check passed, 1 one failed, 77 (CTest's skip code here) for a missing input.
// Uses only Node's own modules, so each test folder's node_modules stays its own.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const SKIP = 77;

export function arg(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

// Exits 77 when `path` is absent.
export function requireFile(path, what = path) {
  if (!existsSync(path)) {
    console.log(`SKIP: ${what} is absent`);
    process.exit(SKIP);
  }
}

// A random-weight model in `dir` with `template` (its markers become vocabulary tokens).
export function makeModel(met, template, dir) {
  const model = join(dir, 'tiny.gguf');
  const r = spawnSync(met, ['make-model', '-o', model, '--layers', '2', '--embd', '128', '--heads', '4',
                            '--kv-heads', '2', '--ff', '256', '--dtype', 'f32', '--vocab', '700',
                            '--chat-template', template], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`met make-model failed (${r.status}):\n${r.stderr}`);
  return model;
}

// Starts `met serve ARGS`; resolves with { url, child, log } once it prints its line.
export function startServer(met, args) {
  const child = spawn(met, ['serve', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      log += d.toString();
      const m = log.match(/met: listening on (http:\/\/\S+)/);
      if (m) resolve({ url: m[1], child, log: () => log });
    });
    child.on('exit', (code) => reject(new Error(`met serve exited (${code}) before listening:\n${log}`)));
  });
}

// Runs each { name, fn } as fn(...args), stops `server` (if any) and exits.
export async function runChecks(checks, args, server) {
  let failed = 0;
  for (const { name, fn } of checks) {
    try {
      await fn(...args);
      console.log(`ok   ${name}`);
    } catch (e) {
      failed += 1;
      console.log(`FAIL ${name}\n     ${e?.stack ?? e}`);
    }
  }
  if (server) {
    const exited = new Promise((resolve) => server.child.on('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) {
      failed += 1;
      console.log(`FAIL met serve exited ${code} after SIGTERM\n${server.log()}`);
    }
  }
  console.log(`${checks.length - failed}/${checks.length} checks passed`);
  process.exit(failed === 0 ? 0 : 1);
}
