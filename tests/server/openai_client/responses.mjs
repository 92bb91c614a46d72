// met serve's Responses API (POST /v1/responses, GET /v1/responses/{id})
// driven by the official OpenAI Node client (openai@6): client.responses.create
// with a string and with items, instructions, function tools whose calls come
// back as function_call items the SDK reads, a follow-up with
// function_call_output and previous_response_id, response.output_text,
// json_schema text.format, client.responses.stream(...) with finalResponse()
// and its raw event sequence checked against the documented order, retrieve,
// and errors as the SDK's error classes; and, on the same thinking model,
// chat.completions.stream() with forced tool calls (reasoning apart from the
// calls, arguments in pieces).
// It makes a random-weight model whose chat template thinks (DeepSeek-R1's:
// <think> when enable_thinking is passed), so reasoning items appear.
// Usage: node responses.mjs --met BUILD/apps/met --template R1.jinja
// Exits 0 when every check passes, 1 when one fails, and 77 (CTest's skip
// code here) when node_modules or the template is missing.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { SKIP, arg, makeModel, requireFile, runChecks, startServer } from '../met_node_support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const KEY = 'sk-met-responses';

if (!existsSync(join(here, 'node_modules', 'openai'))) {
  console.log(`SKIP: openai is not installed; run \`npm ci\` in ${here}`);
  process.exit(SKIP);
}
const { default: OpenAI, BadRequestError, NotFoundError } = await import('openai');

const checks = [];
const check = (name, fn) => checks.push({ name, fn });

const TOOLS = [{
  type: 'function', name: 'get_weather', description: 'The weather in a city', strict: true,
  parameters: { type: 'object', properties: { city: { type: 'string', enum: ['Paris', 'Oslo'] } },
                required: ['city'], additionalProperties: false },
}];
// met's own fields, passed through: this template thinks only when asked.
const THINK = { chat_template_kwargs: { enable_thinking: true }, thinking_budget: 5 };

function expectUsage(u) {
  assert.ok(u.input_tokens >= 1, 'input_tokens');
  assert.equal(u.total_tokens, u.input_tokens + u.output_tokens);
  assert.equal(typeof u.input_tokens_details.cached_tokens, 'number');
  assert.equal(typeof u.output_tokens_details.reasoning_tokens, 'number');
}

check('a string input gives a response with output_text', async (client) => {
  const r = await client.responses.create({ model: 'tiny', input: 'Say hi', max_output_tokens: 8, temperature: 0 });
  assert.equal(r.object, 'response');
  assert.match(r.id, /^resp_/);
  assert.ok(['completed', 'incomplete'].includes(r.status), r.status);
  assert.equal(typeof r.output_text, 'string');
  const msg = r.output.find((o) => o.type === 'message');
  assert.ok(msg, JSON.stringify(r.output));
  assert.equal(msg.role, 'assistant');
  assert.equal(msg.content[0].type, 'output_text');
  assert.equal(r.output_text, msg.content[0].text);
  assert.equal(r.model, 'tiny');
  expectUsage(r.usage);
  if (r.status === 'incomplete') assert.equal(r.incomplete_details.reason, 'max_output_tokens');
});

check('items and instructions are accepted and echoed', async (client) => {
  const r = await client.responses.create({
    model: 'tiny', instructions: 'Be brief.', max_output_tokens: 6, temperature: 0, metadata: { run: 'node' },
    input: [{ role: 'developer', content: 'No markdown.' },
            { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
            { role: 'assistant', content: [{ type: 'output_text', text: 'Hello!' }] },
            { role: 'user', content: 'Again' }],
  });
  assert.equal(r.instructions, 'Be brief.');
  assert.deepEqual(r.metadata, { run: 'node' });
  assert.equal(r.max_output_tokens, 6);
  assert.equal(r.store, true);
  assert.ok(r.usage.output_tokens <= 6);
});

check('function tools give reasoning and function_call items, continued by their outputs', async (client) => {
  const r = await client.responses.create({
    model: 'tiny', input: 'Weather in Paris?', tools: TOOLS, tool_choice: 'required', max_output_tokens: 120,
    temperature: 1.0, seed: 3, reasoning: { effort: 'low', summary: 'auto' }, ...THINK,
  });
  assert.equal(r.output[0].type, 'reasoning', JSON.stringify(r.output));
  assert.match(r.output[0].id, /^rs_/);
  assert.equal(r.output[0].summary[0].type, 'summary_text');
  assert.equal(r.usage.output_tokens_details.reasoning_tokens, 5);
  const calls = r.output.filter((o) => o.type === 'function_call');
  assert.ok(calls.length >= 1, JSON.stringify(r.output));
  for (const call of calls) {
    assert.equal(call.name, 'get_weather');
    assert.match(call.call_id, /^call_/);
    assert.match(call.id, /^fc_/);
    assert.equal(call.status, 'completed');
    assert.ok(['Paris', 'Oslo'].includes(JSON.parse(call.arguments).city), call.arguments);
  }
  assert.deepEqual(r.tools.map((t) => t.name), ['get_weather']);
  const next = await client.responses.create({
    model: 'tiny', previous_response_id: r.id, tools: TOOLS, max_output_tokens: 8,
    input: calls.map((c) => ({ type: 'function_call_output', call_id: c.call_id, output: '{"sky": "clear"}' })),
  });
  assert.equal(next.previous_response_id, r.id);
  assert.ok(next.usage.input_tokens > r.usage.input_tokens, 'the earlier turn is in the prompt');
  const again = await client.responses.retrieve(next.id);
  assert.equal(again.id, next.id);
  assert.deepEqual(again.output, next.output);
});

check('a json_schema text.format gives JSON that follows it', async (client) => {
  const r = await client.responses.create({
    model: 'tiny', input: 'A person', max_output_tokens: 200, temperature: 1.0, seed: 1,
    text: { format: { type: 'json_schema', name: 'person', strict: true, schema: {
      type: 'object', properties: { name: { type: 'string', maxLength: 8 }, age: { type: 'integer', minimum: 0 } },
      required: ['name', 'age'], additionalProperties: false } } },
  });
  const v = JSON.parse(r.output_text);
  assert.equal(typeof v.name, 'string');
  assert.ok(Number.isInteger(v.age));
  assert.equal(r.text.format.type, 'json_schema');
});

// The documented order: created, in_progress; per item added, its parts and
// deltas, done; then one terminal event; sequence_number 0, 1, 2, ...
function checkEventOrder(events) {
  events.forEach((e, i) => assert.equal(e.sequence_number, i, `${e.type} is number ${i}`));
  assert.equal(events[0].type, 'response.created');
  assert.equal(events[1].type, 'response.in_progress');
  assert.ok(['response.completed', 'response.incomplete'].includes(events.at(-1).type), events.at(-1).type);
  let open = null;
  for (const e of events.slice(2, -1)) {
    if (e.type === 'response.output_item.added') {
      assert.equal(open, null, 'one item at a time');
      open = e.output_index;
    } else if (e.type === 'response.output_item.done') {
      assert.equal(e.output_index, open);
      open = null;
    } else {
      assert.equal(e.output_index, open, `${e.type} belongs to the open item`);
    }
  }
  assert.equal(open, null);
}

check('responses.stream text: events in order, finalResponse matches the deltas', async (client) => {
  const stream = client.responses.stream({ model: 'tiny', input: 'Tell me a story', max_output_tokens: 12,
                                           temperature: 0 });
  const events = [];
  let text = '';
  stream.on('response.output_text.delta', (e) => { text += e.delta; });
  for await (const e of stream) events.push(e);
  const final = await stream.finalResponse();
  checkEventOrder(events);
  const types = events.map((e) => e.type);
  assert.deepEqual(types.slice(2, 4), ['response.output_item.added', 'response.content_part.added']);
  assert.deepEqual(types.slice(-4, -1), ['response.output_text.done', 'response.content_part.done',
                                         'response.output_item.done']);
  assert.ok(types.slice(4, -4).every((t) => t === 'response.output_text.delta'), types.join(' '));
  assert.equal(final.output_text, text);
  assert.equal(final.id, events[0].response.id);
  const whole = await client.responses.create({ model: 'tiny', input: 'Tell me a story', max_output_tokens: 12,
                                                temperature: 0 });
  assert.equal(whole.output_text, final.output_text, 'greedy: streamed and whole agree');
});

check('responses.stream with tools: reasoning, then arguments in pieces', async (client) => {
  const stream = client.responses.stream({
    model: 'tiny', input: 'Weather?', tools: TOOLS, tool_choice: { type: 'function', name: 'get_weather' },
    max_output_tokens: 120, temperature: 1.0, seed: 5, ...THINK,
  });
  const events = [];
  for await (const e of stream) events.push(e);
  const final = await stream.finalResponse();
  checkEventOrder(events);
  assert.ok(events.some((e) => e.type === 'response.reasoning_text.delta'));
  const call = final.output.find((o) => o.type === 'function_call');
  assert.ok(call, JSON.stringify(final.output));
  const pieces = events.filter((e) => e.type === 'response.function_call_arguments.delta');
  assert.ok(pieces.length > 1, 'arguments stream in pieces');
  assert.equal(pieces.map((e) => e.delta).join(''), call.arguments);
  const done = events.find((e) => e.type === 'response.function_call_arguments.done');
  assert.equal(done.arguments, call.arguments);
  assert.equal(done.name, 'get_weather');
  assert.ok(['Paris', 'Oslo'].includes(JSON.parse(call.arguments).city));
});

// The same thinking model through chat completions and the SDK's stream
// helper: a forced call keeps the reasoning apart (issue 15's bug: the
// reasoning ended up inside the call) and arrives in pieces.
const CHAT_TOOLS = TOOLS.map(({ type, name, description, parameters }) => (
  { type, function: { name, description, parameters } }));
for (const choice of ['required', { type: 'function', function: { name: 'get_weather' } }]) {
  check(`chat.completions.stream with tool_choice ${JSON.stringify(choice)} on a thinking model`, async (client) => {
    const stream = client.chat.completions.stream({
      model: 'tiny', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: CHAT_TOOLS,
      tool_choice: choice, max_tokens: 120, temperature: 1.0, seed: 3, ...THINK,
    });
    let argPieces = 0;
    let reasoning = '';
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta ?? {};
      if (d.reasoning_content) reasoning += d.reasoning_content;
      for (const c of d.tool_calls ?? []) if (c.index === 0 && c.function?.arguments) ++argPieces;
    }
    const final = await stream.finalChatCompletion();
    const msg = final.choices[0].message;
    assert.ok(reasoning.length > 0 && !reasoning.includes('</think>'), reasoning);
    assert.ok(!msg.content, `no call text in content: ${msg.content}`);
    assert.ok(msg.tool_calls?.length >= 1, JSON.stringify(msg));
    const reason = final.choices[0].finish_reason;
    assert.ok(['tool_calls', 'length'].includes(reason), reason);
    // A call cut off by max_tokens is closed into an object as it stood.
    msg.tool_calls.forEach((c, i) => {
      assert.equal(c.function.name, 'get_weather');
      const args = JSON.parse(c.function.arguments);
      const cut = reason === 'length' && i === msg.tool_calls.length - 1;
      if (!cut) assert.ok(['Paris', 'Oslo'].includes(args.city), c.function.arguments);
    });
    assert.ok(argPieces > 1, 'arguments stream in pieces');
  });
}

check('bad requests are BadRequestErrors naming the field; an unknown id is NotFound', async (client) => {
  await assert.rejects(
    client.responses.create({ model: 'tiny', input: 'x', tools: [{ type: 'web_search' }] }),
    (e) => e instanceof BadRequestError && e.param === 'tools[0].type');
  await assert.rejects(
    client.responses.create({ model: 'tiny', input: 'x', previous_response_id: 'resp_missing' }),
    (e) => e instanceof BadRequestError && e.param === 'previous_response_id');
  await assert.rejects(
    client.responses.create({ model: 'tiny', input: 'x', max_output_tokens: 0 }),
    (e) => e instanceof BadRequestError && e.param === 'max_output_tokens');
  await assert.rejects(client.responses.retrieve('resp_missing'), (e) => e instanceof NotFoundError);
});

async function main() {
  const met = arg('--met');
  const template = arg('--template');
  if (!met || !template) {
    console.error('usage: node responses.mjs --met MET --template TEMPLATE.jinja');
    process.exit(2);
  }
  requireFile(template);
  const dir = mkdtempSync(join(tmpdir(), 'met-responses-'));
  const server = await startServer(met, [makeModel(met, template, dir), '--port', '0', '--threads', '1',
                                         '--model-alias', 'tiny', '--api-key', KEY]);
  const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0, timeout: 60_000 });
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  await runChecks(checks, [client], server);
}

await main();
