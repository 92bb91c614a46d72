// met serve driven by the official OpenAI Node client (openai@6): models,
// completions and chat (plain and streamed with include_usage), embeddings
// (base64, the SDK default, and float with dimensions), stop, seed,
// usage fields, and errors surfacing as the SDK's error classes (400 as
// BadRequestError with its param, 401 as AuthenticationError).
// Usage: node conformance.mjs --met BUILD/apps/met --model stories260K.gguf
//        node conformance.mjs --url http://127.0.0.1:PORT/v1 --api-key KEY
// With --met it starts `met serve MODEL --port 0 --api-key KEY` with a
// ChatML --chat-template of its own, and checks that SIGTERM exits 0.
// Exits 0 when every check passes, 1 when one fails, and 77 (CTest's skip
// code here) when node_modules or the model is missing.
import { existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { SKIP, arg, requireFile, runChecks, startServer } from '../met_node_support.mjs';

const here = dirname(fileURLToPath(import.meta.url));

if (!existsSync(join(here, 'node_modules', 'openai'))) {
  console.log(`SKIP: openai is not installed; run \`npm ci\` in ${here}`);
  process.exit(SKIP);
}
const { default: OpenAI, BadRequestError, AuthenticationError } = await import('openai');

const CHATML =
  "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}" +
  "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
const KEY = arg('--api-key') ?? 'sk-met-conformance';

// Starts met serve with a ChatML template of its own; resolves with { url, child, dir, log }.
async function startWithChatMl(met, model) {
  const dir = mkdtempSync(join(tmpdir(), 'met-openai-'));
  const template = join(dir, 'chatml.jinja');
  writeFileSync(template, CHATML);
  const server = await startServer(met, [model, '--port', '0', '--threads', '1', '--model-alias', 'stories',
                                         '--api-key', KEY, '--chat-template', template]);
  return { ...server, url: `${server.url}/v1`, dir };
}

const checks = [];
const check = (name, fn) => checks.push({ name, fn });

function expectUsage(u, completion) {
  assert.ok(u.prompt_tokens >= 1, 'prompt_tokens');
  if (completion !== undefined) assert.equal(u.completion_tokens, completion);
  assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens);
  assert.equal(typeof u.prompt_tokens_details.cached_tokens, 'number');
  assert.equal(u.completion_tokens_details.reasoning_tokens, 0);
  assert.equal(u.completion_tokens_details.accepted_prediction_tokens, 0);
}

check('models.list names the served model', async (client) => {
  const models = await client.models.list();
  assert.deepEqual(models.data.map((m) => m.id), ['stories']);
});

check('a completion has text, finish_reason and usage', async (client) => {
  const r = await client.completions.create({ model: 'stories', prompt: 'Once upon a time', max_tokens: 8,
                                              temperature: 0, ignore_eos: true });
  assert.equal(r.object, 'text_completion');
  assert.equal(r.choices.length, 1);
  assert.equal(typeof r.choices[0].text, 'string');
  assert.equal(r.choices[0].finish_reason, 'length');
  expectUsage(r.usage, 8);
});

check('a streamed completion has the same text and a usage chunk', async (client) => {
  const body = { model: 'stories', prompt: 'Once upon a time', max_tokens: 8, temperature: 0, ignore_eos: true };
  const whole = await client.completions.create(body);
  const stream = await client.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let usage = null;
  let finish = null;
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      text += c.text;
      finish = c.finish_reason ?? finish;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(text, whole.choices[0].text);
  assert.equal(finish, 'length');
  expectUsage(usage, 8);
});

check('stop ends the text before the stop string', async (client) => {
  const r = await client.completions.create({ model: 'stories', prompt: '', max_tokens: 40, temperature: 0,
                                              stop: ['little'] });
  assert.ok(r.choices[0].text.startsWith('Once upon a time'), r.choices[0].text);
  assert.ok(!r.choices[0].text.includes('little'), r.choices[0].text);
  assert.equal(r.choices[0].finish_reason, 'stop');
});

check('the same seed gives the same sampled text', async (client) => {
  const body = { model: 'stories', prompt: 'Once', max_tokens: 16, temperature: 1.0, seed: 7 };
  const a = await client.completions.create(body);
  const b = await client.completions.create(body);
  assert.equal(a.choices[0].text, b.choices[0].text);
});

check('a chat completion returns an assistant message', async (client) => {
  const r = await client.chat.completions.create({ model: 'stories', max_tokens: 6, temperature: 0,
                                                   messages: [{ role: 'user', content: 'Tell me a story' }] });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.equal(typeof r.choices[0].message.content, 'string');
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  expectUsage(r.usage);
});

check('a streamed chat starts with the role and ends with usage', async (client) => {
  const stream = await client.chat.completions.create({
    model: 'stories', max_tokens: 6, temperature: 0, stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.equal(chunks[0].object, 'chat.completion.chunk');
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const last = chunks[chunks.length - 1];
  assert.deepEqual(last.choices, []);
  expectUsage(last.usage);
  assert.ok(chunks.some((c) => c.choices.length > 0 && c.choices[0].finish_reason));
});

check('embeddings come back as unit vectors, base64 (the SDK default) and float alike', async (client) => {
  const r = await client.embeddings.create({ model: 'stories', input: ['Once upon a time', 'the end'] });
  assert.equal(r.object, 'list');
  assert.equal(r.data.length, 2);
  assert.deepEqual(r.data.map((d) => d.index), [0, 1]);
  const v = r.data[0].embedding;
  assert.ok(v.length > 0);
  assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5, 'unit length');
  assert.ok(r.usage.prompt_tokens >= 2);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens);
  const f = await client.embeddings.create({ model: 'stories', input: 'Once upon a time', encoding_format: 'float',
                                            dimensions: 8 });
  assert.equal(f.data[0].embedding.length, 8);
  const head = Math.hypot(...v.slice(0, 8));
  f.data[0].embedding.forEach((x, i) => assert.ok(Math.abs(x - v[i] / head) < 1e-5, `dimension ${i}`));
});

check('a bad field is a BadRequestError naming it', async (client) => {
  await assert.rejects(
    client.completions.create({ model: 'stories', prompt: 'a', max_tokens: -1 }),
    (e) => e instanceof BadRequestError && e.status === 400 && e.param === 'max_tokens' &&
           e.type === 'invalid_request_error');
  await assert.rejects(
    client.chat.completions.create({ model: 'stories', messages: 'hi' }),
    (e) => e instanceof BadRequestError && e.param === 'messages');
});

check('a wrong API key is an AuthenticationError', async (_client, url) => {
  const wrong = new OpenAI({ baseURL: url, apiKey: 'sk-wrong', maxRetries: 0 });
  await assert.rejects(wrong.models.list(), (e) => e instanceof AuthenticationError && e.status === 401 &&
                                                  e.code === 'invalid_api_key');
});

async function main() {
  let server = null;
  let url = arg('--url');
  if (!url) {
    const met = arg('--met');
    const model = arg('--model');
    if (!met || !model) {
      console.error('usage: node conformance.mjs (--met MET --model MODEL.gguf | --url URL [--api-key KEY])');
      process.exit(2);
    }
    requireFile(model);
    server = await startWithChatMl(met, model);
    url = server.url;
    process.on('exit', () => rmSync(server.dir, { recursive: true, force: true }));
  }
  const client = new OpenAI({ baseURL: url, apiKey: KEY, maxRetries: 0, timeout: 60_000 });
  await runChecks(checks, [client, url], server);
}

await main();
