// `grpo data`: regenerate the bundled datasets, generate arithmetic problems, convert public datasets into the
// record schemas, validate a data file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { generateArithmetic } from '../../data/arithmetic.js';
import { generateMoviesMulti } from '../../data/movies-multi.js';
import { loadMoviesMultiSource, writeMoviesMulti } from '../../data/movies-multi-files.js';
import { GrpoError } from '../../errors.js';
import { intFlag } from '../args.js';
import { required, type Command } from '../command.js';
import { runConvert, runValidate, SOURCE_FORMATS } from '../data-files.js';

function writeJsonl(path: string, records: readonly unknown[]): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

const KINDS = ['movies-multi', 'arithmetic', 'convert', 'validate', 'redial', 'protoqa'] as const;

export const dataCommand: Command = {
  name: 'data',
  summary: 'validate a data file, convert public datasets (GSM8K, MATH, DeepMath, ReDial, ProtoQA), generate the bundled ones',
  usage: 'grpo data validate <file.jsonl> --kind recommend|catalog|qa|math [--json]\n' +
    `       grpo data convert <file.jsonl> --from ${SOURCE_FORMATS.join('|')} --out <file.jsonl>\n` +
    '       grpo data movies-multi [--shared ../shared/data] [--out data/movies-multi] [--seed 2026] [--requests 2000] [--films 5000]\n' +
    '       grpo data arithmetic --out <file.jsonl> [--count 1000] [--seed 0] [--max-steps 4] [--style concise|verbose]\n' +
    '       grpo data redial|protoqa <file.jsonl> --out <file.jsonl>     (= convert --from redial|protoqa)',
  description: 'validate: checks every line against the record schema of its kind (docs/datasets.md), reports every bad line\n' +
    '(line, field, expected, received) and a summary; exit code 2 when a line is bad. convert: a public dataset\'s JSONL into\n' +
    'that schema (gsm8k, math, deepmath → math; redial → recommend; protoqa → qa). movies-multi: the seeded multi-respondent\n' +
    'benchmark from the real catalog and ReDial popularity (simulated respondents). arithmetic: seeded multi-step integer\n' +
    'problems with worked solutions (the CCR task).',
  flags: [
    { name: 'kind', help: 'validate: the record kind (recommend, catalog, qa, math)' },
    { name: 'from', help: `convert: the source format (${SOURCE_FORMATS.join(', ')})` },
    { name: 'json', help: 'validate: print the summary as JSON', boolean: true },
    { name: 'out', help: 'output folder (movies-multi) or JSONL file' },
    { name: 'shared', help: 'folder of the source data files (movies-multi; default ../shared/data)' },
    { name: 'seed', help: 'generator seed' },
    { name: 'requests', help: 'movies-multi requests over all splits (default 2000)' },
    { name: 'films', help: 'movies-multi benchmark catalog size (default 5000)' },
    { name: 'count', help: 'arithmetic problems (default 1000)' },
    { name: 'max-steps', help: 'arithmetic: most operations per problem (default 4)' },
    { name: 'style', help: 'arithmetic solutions: concise (default) or verbose' },
  ],
  acceptsConfig: false,
  async run(args, reporter) {
    const [kind, input] = args.positionals;
    if (!(KINDS as readonly string[]).includes(kind)) throw new GrpoError('GRPO_INVALID_ARGUMENT', `grpo data: expected one of ${KINDS.join(', ')} but received ${kind ? `"${kind}"` : 'nothing'}`);
    if (kind === 'movies-multi') {
      const source = loadMoviesMultiSource(args.flags.get('shared') ?? '../shared/data');
      const generated = generateMoviesMulti(source, { seed: intFlag(args, 'seed', 2026), requests: intFlag(args, 'requests', 2000), benchmarkFilms: intFlag(args, 'films', 5000) });
      reporter.line(JSON.stringify(writeMoviesMulti(args.flags.get('out') ?? 'data/movies-multi', generated), null, 2));
      return;
    }
    if (kind !== 'arithmetic' && !input) throw new GrpoError('GRPO_INVALID_ARGUMENT', `grpo data ${kind}: expected the input file after "${kind}"`);
    if (kind === 'validate') return runValidate(input, args.flags.get('kind'), args.flags.get('json') === 'true', reporter);
    const out = required(args, 'out', 'file.jsonl');
    if (kind !== 'arithmetic') return runConvert(input, kind === 'convert' ? args.flags.get('from') : kind, out, reporter);
    const style = args.flags.get('style') ?? 'concise';
    if (style !== 'concise' && style !== 'verbose') throw new GrpoError('GRPO_INVALID_ARGUMENT', `--style: expected concise or verbose but received "${style}"`);
    writeJsonl(out, generateArithmetic({ count: intFlag(args, 'count', 1000), seed: intFlag(args, 'seed', 0), maxSteps: intFlag(args, 'max-steps', 4), style }));
    reporter.line(`Wrote ${out}`);
  },
};
