// met serve's Messages API driven by the official Anthropic Node client
// (@anthropic-ai/sdk, pinned in package.json): messages.create whole and
// streamed (client.messages.stream with its finalMessage(), and the raw event
// stream in the documented order), thinking blocks, a tool_use block the SDK
// parses, stop_sequences, countTokens, and errors surfacing as the SDK's
// classes (x-api-key with a wrong key as AuthenticationError, a bad field as
// BadRequestError).
// Usage: node messages.mjs --met BUILD/apps/met --template Qwen3.5-4B.jinja
// It makes a small random-weight model whose template opens <think> and
// writes <tool_call> (met make-model), starts `met serve MODEL --port 0
// --api-key KEY`, and checks that SIGTERM exits 0.
// Exits 0 when every check passes, 1 when one fails, and 77 (CTest's skip
// code here) when node_modules or the template is missing.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { SKIP, arg, makeModel, requireFile, runChecks, startServer } from '../met_node_support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const KEY = 'sk-met-anthropic';

if (!existsSync(join(here, 'node_modules', '@anthropic-ai', 'sdk'))) {
  console.log(`SKIP: @anthropic-ai/sdk is not installed; run \`npm ci\` in ${here}`);
  process.exit(SKIP);
}
const { default: Anthropic, AuthenticationError, BadRequestError } = await import('@anthropic-ai/sdk');

const checks = [];
const check = (name, fn) => checks.push({ name, fn });

const WEATHER = {
  name: 'get_weather',
  description: 'The current weather in a city.',
  input_schema: { type: 'object', properties: { city: { enum: ['Paris', 'Oslo'] } }, required: ['city'] },
};
const ASK = [{ role: 'user', content: 'What is the weather in Paris?' }];

function expectUsage(u) {
  assert.ok(u.input_tokens + u.cache_read_input_tokens >= 1, 'input_tokens');
  assert.equal(typeof u.output_tokens, 'number');
  assert.equal(u.cache_creation_input_tokens, 0);
}

check('messages.create answers a message with text and usage', async (client) => {
  const m = await client.messages.create({ model: 'tiny', max_tokens: 8, temperature: 0, system: 'Be brief.',
                                           thinking: { type: 'disabled' }, messages: ASK });
  assert.equal(m.type, 'message');
  assert.equal(m.role, 'assistant');
  assert.match(m.id, /^msg_/);
  assert.equal(m.model, 'tiny');
  assert.ok(['end_turn', 'max_tokens'].includes(m.stop_reason), m.stop_reason);
  assert.equal(m.stop_sequence, null);
  for (const block of m.content) assert.equal(block.type, 'text');
  expectUsage(m.usage);
  assert.ok(m.usage.output_tokens <= 8);
});

check('thinking comes as a thinking block before the text', async (client) => {
  const m = await client.messages.create({ model: 'tiny', max_tokens: 16, temperature: 0, messages: ASK,
                                           thinking: { type: 'enabled', budget_tokens: 5 } });
  assert.equal(m.content[0]?.type, 'thinking', JSON.stringify(m.content));
  assert.ok(m.content[0].thinking.length > 0);
  assert.equal(m.content[0].signature, '');
  assert.ok(!m.content[0].thinking.includes('</think>'));
});

check('messages.stream gives the same message through finalMessage()', async (client) => {
  const params = { model: 'tiny', max_tokens: 16, temperature: 0, messages: ASK,
                   thinking: { type: 'enabled', budget_tokens: 5 } };
  const whole = await client.messages.create(params);
  const stream = client.messages.stream(params);
  let thinking = '';
  stream.on('thinking', (delta) => { thinking += delta; });
  const final = await stream.finalMessage();
  assert.deepEqual(final.content, whole.content, 'greedy: streamed and whole agree');
  assert.equal(final.stop_reason, whole.stop_reason);
  assert.equal(final.usage.output_tokens, whole.usage.output_tokens);
  assert.equal(thinking, whole.content[0].thinking);
});

check('the raw event stream follows the documented order', async (client) => {
  const stream = await client.messages.create({ model: 'tiny', max_tokens: 12, temperature: 0, messages: ASK,
                                                thinking: { type: 'enabled', budget_tokens: 4 }, stream: true });
  const types = [];
  let open = null;
  let next = 0;
  for await (const e of stream) {
    types.push(e.type);
    if (e.type === 'content_block_start') {
      assert.equal(open, null, 'one block at a time');
      assert.equal(e.index, next);
      open = next++;
    } else if (e.type === 'content_block_delta') {
      assert.equal(e.index, open);
    } else if (e.type === 'content_block_stop') {
      assert.equal(e.index, open);
      open = null;
    }
  }
  assert.equal(types[0], 'message_start');
  assert.deepEqual(types.slice(-2), ['message_delta', 'message_stop']);
  assert.ok(next >= 1, 'at least the thinking block');
});

check('a forced tool is a tool_use block whose input the SDK parses', async (client) => {
  const params = { model: 'tiny', max_tokens: 200, temperature: 0, thinking: { type: 'disabled' }, messages: ASK,
                   tools: [WEATHER], tool_choice: { type: 'tool', name: 'get_weather' } };
  const m = await client.messages.create(params);
  const use = m.content.find((b) => b.type === 'tool_use');
  assert.ok(use, JSON.stringify(m.content));
  assert.equal(use.name, 'get_weather');
  assert.match(use.id, /^toolu_/);
  assert.ok(['Paris', 'Oslo'].includes(use.input.city), JSON.stringify(use.input));
  assert.equal(m.stop_reason, 'tool_use');

  const stream = client.messages.stream(params);
  let json = '';
  stream.on('inputJson', (delta) => { json += delta; });
  const final = await stream.finalMessage();
  const streamed = final.content.find((b) => b.type === 'tool_use');
  assert.ok(streamed, JSON.stringify(final.content));
  assert.ok(['Paris', 'Oslo'].includes(streamed.input.city), JSON.stringify(streamed.input));
  assert.deepEqual(JSON.parse(json), streamed.input);
  assert.equal(final.stop_reason, 'tool_use');

  // The call and its result as history.
  const next = await client.messages.create({
    model: 'tiny', max_tokens: 4, thinking: { type: 'disabled' }, tools: [WEATHER],
    messages: [...ASK, { role: 'assistant', content: [use] },
               { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '18C' }] }],
  });
  assert.equal(next.type, 'message');
});

check('with thinking on, a forced call comes after a thinking block', async (client) => {
  const final = await client.messages.stream({
    model: 'tiny', max_tokens: 200, temperature: 0, messages: ASK, thinking: { type: 'enabled', budget_tokens: 5 },
    tools: [WEATHER], tool_choice: { type: 'any' } }).finalMessage();
  const [first, ...calls] = final.content;
  assert.equal(first?.type, 'thinking', JSON.stringify(final.content));
  assert.ok(calls.length >= 1, JSON.stringify(final.content));
  for (const call of calls) {
    assert.equal(call.type, 'tool_use');
    assert.ok(['Paris', 'Oslo'].includes(call.input.city), JSON.stringify(call));
  }
  assert.ok(!first.thinking.includes('</think>'));
  assert.equal(final.stop_reason, 'tool_use');
});

check('a stop sequence is named in stop_sequence', async (client) => {
  const params = { model: 'tiny', max_tokens: 12, temperature: 0, thinking: { type: 'disabled' }, messages: ASK };
  const free = await client.messages.create(params);
  const text = [...(free.content[0]?.text ?? '')];  // code points
  assert.ok(text.length >= 2, JSON.stringify(free.content));
  const stop = text.slice(Math.floor(text.length / 2), Math.floor(text.length / 2) + 1).join('');
  const m = await client.messages.create({ ...params, stop_sequences: [stop] });
  assert.equal(m.stop_reason, 'stop_sequence');
  assert.equal(m.stop_sequence, stop);
});

check('countTokens counts the prompt a message is given', async (client) => {
  const params = { model: 'tiny', system: 'Be brief.', messages: ASK, tools: [WEATHER] };
  const counted = await client.messages.countTokens(params);
  const m = await client.messages.create({ ...params, max_tokens: 1, temperature: 0 });
  assert.equal(counted.input_tokens, m.usage.input_tokens + m.usage.cache_read_input_tokens);
});

check('a bad field is a BadRequestError', async (client) => {
  await assert.rejects(
    client.messages.create({ model: 'tiny', max_tokens: 4, messages: ASK, stop_sequences: [7] }),
    (e) => e instanceof BadRequestError && e.status === 400 && e.error?.error?.type === 'invalid_request_error' &&
           /stop_sequences/.test(e.error?.error?.message));
});

check('x-api-key with a wrong key is an AuthenticationError', async (_client, url) => {
  const wrong = new Anthropic({ baseURL: url, apiKey: 'sk-wrong', maxRetries: 0 });
  await assert.rejects(wrong.messages.create({ model: 'tiny', max_tokens: 4, messages: ASK }),
                       (e) => e instanceof AuthenticationError && e.status === 401 &&
                              e.error?.error?.type === 'authentication_error');
});

async function main() {
  const met = arg('--met');
  const template = arg('--template');
  if (!met || !template) {
    console.error('usage: node messages.mjs --met MET --template TEMPLATE.jinja');
    process.exit(2);
  }
  requireFile(template);
  const dir = mkdtempSync(join(tmpdir(), 'met-anthropic-'));
  const server = await startServer(met, [makeModel(met, template, dir), '--port', '0', '--threads', '1',
                                         '--model-alias', 'tiny', '--api-key', KEY]);
  // The SDK sends the key as x-api-key (and anthropic-version).
  const client = new Anthropic({ baseURL: server.url, apiKey: KEY, maxRetries: 0, timeout: 60_000 });
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  await runChecks(checks, [client, server.url], server);
}

await main();
