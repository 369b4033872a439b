// `grpo data`: regenerate the bundled datasets, generate arithmetic problems, convert ../shared-style files.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { generateArithmetic } from '../../data/arithmetic.js';
import { convertProtoqa, convertRedial } from '../../data/convert.js';
import { generateMoviesMulti } from '../../data/movies-multi.js';
import { loadMoviesMultiSource, writeMoviesMulti } from '../../data/movies-multi-files.js';
import { GrpoError } from '../../errors.js';
import { intFlag } from '../args.js';
import { required, type Command } from '../command.js';

function writeJsonl(path: string, records: readonly unknown[]): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

const KINDS = ['movies-multi', 'arithmetic', 'redial', 'protoqa'] as const;

export const dataCommand: Command = {
  name: 'data',
  summary: 'generate the bundled datasets (movies-multi, arithmetic) or convert ReDial / ProtoQA files',
  usage: 'grpo data movies-multi [--shared ../shared/data] [--out data/movies-multi] [--seed 2026] [--requests 2000] [--films 5000]\n' +
    '       grpo data arithmetic --out <file.jsonl> [--count 1000] [--seed 0] [--max-steps 4] [--style concise|verbose]\n' +
    '       grpo data redial <redial.jsonl> --out <requests.jsonl>\n' +
    '       grpo data protoqa <protoqa.jsonl> --out <qa.jsonl>',
  description: 'movies-multi: the seeded multi-respondent benchmark from the real catalog and ReDial popularity (simulated respondents).\n' +
    'arithmetic: seeded multi-step integer problems with worked solutions (the CCR task). redial/protoqa: converters to the\n' +
    'request and QA record schemas (docs/recommendation.md).',
  flags: [
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
    const out = required(args, 'out', 'file.jsonl');
    if (kind === 'arithmetic') {
      const style = args.flags.get('style') ?? 'concise';
      if (style !== 'concise' && style !== 'verbose') throw new GrpoError('GRPO_INVALID_ARGUMENT', `--style: expected concise or verbose but received "${style}"`);
      writeJsonl(out, generateArithmetic({ count: intFlag(args, 'count', 1000), seed: intFlag(args, 'seed', 0), maxSteps: intFlag(args, 'max-steps', 4), style }));
    } else {
      if (!input) throw new GrpoError('GRPO_INVALID_ARGUMENT', `grpo data ${kind}: expected the input file after "${kind}"`);
      if (kind === 'redial') {
        const { requests, dropped } = convertRedial(input);
        writeJsonl(out, requests);
        reporter.line(`${requests.length} requests written, ${dropped} dialogues without recommendations dropped`);
      } else writeJsonl(out, convertProtoqa(input));
    }
    reporter.line(`Wrote ${out}`);
  },
};
