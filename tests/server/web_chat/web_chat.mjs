// met serve's chat page (GET /, src/server/web/chat.html) in headless Chromium,
// driven by puppeteer-core (pinned in package.json; `npm ci` here installs it).
// It makes a random-weight model whose chat template opens <think> (Qwen3.5's),
// starts `met serve` with an API key, loads /, types the key into the settings
// and sends a message: streamed reasoning and text appear, a screenshot is taken,
// the token counts and speed follow. Then a long reply is stopped mid-stream
// (the button is Send again, the text stops growing, the server's running
// request count falls to 0 and its failure count, which counts cancellations,
// rises), a bad setting's 400 shows in the message, and after a reload the
// conversation is still there (localStorage).
// Usage: node web_chat.mjs --met BUILD/apps/met --template Qwen3.5-4B.jinja
//        --screenshot OUT.png [--chromium PATH]
// Exits 0 when every check passes, 1 when one fails, and 77 (CTest's skip code
// here) when chromium, node_modules or the template is missing.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

const here = dirname(fileURLToPath(import.meta.url));
const SKIP = 77;
const KEY = 'sk-met-web-chat';
const ALIAS = 'webchat';

function arg(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function skip(why) {
  console.log(`SKIP: ${why}`);
  process.exit(SKIP);
}

function findChromium() {
  if (arg('--chromium')) return arg('--chromium');
  for (const dir of (process.env.PATH || '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      const p = join(dir, name);
      try {
        accessSync(p, constants.X_OK);
        return p;
      } catch { /* not here */ }
    }
  }
  return undefined;
}

const met = arg('--met');
const template = arg('--template');
const screenshot = arg('--screenshot');
if (!met || !template || !screenshot) {
  console.error('usage: node web_chat.mjs --met MET --template TEMPLATE.jinja --screenshot OUT.png');
  process.exit(1);
}
if (!existsSync(join(here, 'node_modules', 'puppeteer-core'))) {
  skip(`puppeteer-core is not installed; run \`npm ci\` in ${here}`);
}
const chromium = findChromium();
if (!chromium) skip('chromium is not installed (Debian: apt-get install chromium)');
if (!existsSync(template)) skip(`the chat template ${template} is missing`);
const { default: puppeteer } = await import('puppeteer-core');

// A small random-weight model (~7M parameters: slow enough on one thread that
// a long reply streams for seconds); its vocabulary gets the template's markers.
function makeModel(dir) {
  const model = join(dir, 'think.gguf');
  const r = spawnSync(met, ['make-model', '-o', model, '--layers', '4', '--embd', '384', '--heads', '6',
                            '--kv-heads', '2', '--ff', '1024', '--dtype', 'f32', '--vocab', '700', '--ctx', '8192',
                            '--threads', '1', '--chat-template', template], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`met make-model failed (${r.status}):\n${r.stderr}`);
  return model;
}

// Starts met serve; resolves with { url, child } once it prints its line.
function startServer(model) {
  const args = ['serve', model, '--port', '0', '--threads', '1', '--model-alias', ALIAS, '--api-key', KEY];
  const child = spawn(met, args, { stdio: ['ignore', 'ignore', 'pipe'] });
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

// A sample of the Prometheus text (no key needed for /metrics).
async function metric(url, name) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
  assert.ok(line, `${name} is not in /metrics`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function waitFor(what, fn, timeoutMs = 10000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The page's state as the checks read it.
const snapshot = (page) => page.evaluate(() => {
  const all = [...document.querySelectorAll('#messages .msg')];
  const messages = all.map((m) => ({
    role: m.classList.contains('user') ? 'user' : 'assistant',
    content: m.querySelector('.content').textContent,
    reasoning: m.querySelector('.reasoning-text')?.textContent ?? '',
    reasoningShown: m.querySelector('.reasoning') ? !m.querySelector('.reasoning').hidden : false,
    stats: m.querySelector('.stats')?.textContent ?? '',
    error: m.querySelector('.error')?.textContent ?? '',
    streaming: m.classList.contains('streaming'),
  }));
  return {
    button: document.querySelector('#send').textContent,
    model: document.querySelector('#model-name').textContent,
    chats: [...document.querySelectorAll('#chat-list .open')].map((b) => b.textContent),
    messages,
    last: messages[messages.length - 1],
  };
});

async function setField(page, selector, value) {
  await page.$eval(selector, (e) => { e.value = ''; });
  await page.type(selector, value);
}

async function run(url, page) {
  const step = (s) => console.log(`- ${s}`);

  const response = await page.goto(`${url}/`, { waitUntil: 'load' });
  assert.equal(response.status(), 200);
  assert.equal(response.headers()['content-type'], 'text/html; charset=utf-8');
  await waitFor('the header to ask for the key', async () => (await snapshot(page)).model.includes('401'));
  step('the page loads without a key; the header says /v1/models needs one');

  await page.click('#settings-button');
  await setField(page, '#s-api-key', KEY);
  await page.keyboard.press('Tab');  // the change event refetches the model
  await waitFor('the model name', async () => (await snapshot(page)).model === ALIAS);
  await setField(page, '#s-max_tokens', '24');
  await setField(page, '#s-temperature', '1');
  await setField(page, '#s-seed', '3');
  await setField(page, '#s-extra', '{"thinking_budget": 8, "ignore_eos": true}');
  await page.click('#settings-button');
  step('with the key typed into the settings, the header names the model');

  await page.type('#prompt', 'Tell me a story');
  await page.click('#send');
  await waitFor('streamed text in the assistant message', async () => {
    const s = await snapshot(page);
    return s.last.role === 'assistant' && s.last.content.length > 0;
  }, 60000);
  await waitFor('the reply to finish', async () => (await snapshot(page)).button === 'Send', 60000);
  let s = await snapshot(page);
  assert.equal(s.messages.length, 2);
  assert.deepEqual([s.messages[0].role, s.messages[0].content], ['user', 'Tell me a story']);
  const first = s.messages[1];
  assert.ok(first.content.length > 0, 'content');
  assert.ok(first.reasoningShown && first.reasoning.length > 0, 'the reasoning block shows the thinking');
  assert.ok(!first.content.includes('</think>') && !first.reasoning.includes('</think>'), 'no markup');
  assert.ok(!first.error, first.error);
  assert.match(first.stats, /^\d+ prompt · 24 completion tokens · \d+\.\d tok\/s · first token after/);
  assert.match(first.stats, /finish: length/);
  step(`streamed: ${first.reasoning.length} chars of reasoning, ${first.content.length} of text; "${first.stats}"`);

  await page.$eval('.msg.assistant .reasoning', (d) => { d.open = true; });
  await page.screenshot({ path: screenshot });
  const png = readFileSync(screenshot);
  assert.ok(png.length > 1000, `screenshot of ${png.length} bytes`);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  step(`screenshot: ${screenshot} (${png.length} bytes)`);

  const failedBefore = await metric(url, 'met:request_failure_total');
  await page.click('#settings-button');
  await setField(page, '#s-max_tokens', '8000');
  await page.click('#settings-button');
  await page.type('#prompt', 'Now a very long one');
  await page.keyboard.press('Enter');
  const growing = await waitFor('the long reply to stream', async () => {
    const now = await snapshot(page);
    return now.button === 'Stop' && now.last.streaming && now.last.content.length > 0 ? now : null;
  }, 60000);
  await sleep(200);
  s = await snapshot(page);
  assert.equal(s.button, 'Stop', 'the long reply ended before it could be stopped');
  assert.ok(s.last.content.length > growing.last.content.length, 'the text grows while it streams');
  await page.click('#send');
  await waitFor('the button to say Send again', async () => (await snapshot(page)).button === 'Send', 5000);
  const stopped = await snapshot(page);
  await sleep(1000);
  s = await snapshot(page);
  assert.equal(s.last.content, stopped.last.content, 'no text arrives after Stop');
  assert.ok(s.last.content.length > 0, 'the partial text stays');
  assert.ok(!s.last.streaming);
  assert.match(s.last.stats, /stopped after/);
  await waitFor('the server to drop the request', async () =>
    (await metric(url, 'met:num_requests_running')) === 0 &&
    (await metric(url, 'met:request_failure_total')) === failedBefore + 1);
  step(`Stop kept ${s.last.content.length} chars; the server cancelled the request`);

  await page.click('#settings-button');
  await setField(page, '#s-temperature', '-1');
  await page.click('#settings-button');
  await page.type('#prompt', 'This one fails');
  await page.click('#send');
  await waitFor('the error in the message', async () => (await snapshot(page)).last.error.length > 0);
  s = await snapshot(page);
  assert.match(s.last.error, /^HTTP 400: .*temperature/);
  assert.equal(s.button, 'Send');
  step(`a bad setting shows "${s.last.error}"`);

  const before = await snapshot(page);
  await page.reload({ waitUntil: 'load' });
  await waitFor('the conversation after a reload', async () => (await snapshot(page)).messages.length > 0);
  s = await snapshot(page);
  assert.equal(s.messages.length, 6);
  for (let i = 0; i < 6; ++i) {
    assert.equal(s.messages[i].content, before.messages[i].content, `message ${i} after the reload`);
    assert.equal(s.messages[i].stats, before.messages[i].stats, `message ${i}'s stats after the reload`);
  }
  assert.deepEqual(s.chats, ['Tell me a story']);
  step('after a reload the conversation is still there');

  await page.click('#new-chat');
  s = await snapshot(page);
  assert.equal(s.messages.length, 0);
  assert.equal(s.chats.length, 2);
  await page.evaluate(() => document.querySelectorAll('#chat-list .open')[1].click());
  assert.equal((await snapshot(page)).messages.length, 6);
  step('New chat starts an empty conversation; the old one opens again from the list');
}

let dir;
let server;
let browser;
let failed = false;
try {
  dir = mkdtempSync(join(tmpdir(), 'met-web-chat-'));
  server = await startServer(makeModel(dir));
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    userDataDir: join(dir, 'profile'),
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 760 });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await run(server.url, page);
  assert.deepEqual(pageErrors, [], 'the page threw');
  console.log('ok: the chat page works in Chromium');
} catch (e) {
  failed = true;
  console.error(`FAIL: ${e.stack || e}`);
  if (server) console.error(`met serve's log:\n${server.log()}`);
} finally {
  if (browser) await browser.close().catch(() => {});
  if (server) {
    const exited = server.child.exitCode !== null ? Promise.resolve(server.child.exitCode)
      : new Promise((r) => server.child.on('exit', r));
    server.child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) {
      failed = true;
      console.error(`met serve exited ${code} after SIGTERM`);
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
