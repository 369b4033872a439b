// What `grpo data validate` reports about the good records of a file, per kind: counts and their spread,
// gathered a record at a time.
import { normalizeTitle } from '../text/normalize.js';
import type { RecItem } from '../text/records.js';
import type { MathRecord } from './math-record.js';
import type { Distribution } from './movies-multi-stats.js';
import type { CatalogEntry, QaRecord, RecommendRecord } from './schemas.js';
import { Counts, Tally } from './tally.js';

/** A summary value: a count, counts by label, or a distribution. */
export type StatValue = number | Record<string, number> | Distribution;

/** Gathers the statistics of one kind of record. */
export interface StatsCollector<T> {
  add(record: T): void;
  summary(): Record<string, StatValue>;
}

/** How an item is told apart from others of its title. */
const keyKind = (item: RecItem) => (item.year !== undefined && item.creator !== undefined ? 'year and creator' : item.year !== undefined ? 'year' : 'creator');

export function recommendStats(): StatsCollector<RecommendRecord> {
  const respondents = new Tally(), items = new Tally(), seen = new Tally(), relevant = new Tally();
  const itemKeys = new Counts(), splits = new Counts(), catalogs = new Counts();
  return {
    add(record) {
      respondents.add(record.respondents.length);
      seen.add(record.seen.length);
      for (const respondent of record.respondents) {
        items.add(respondent.items.length);
        respondent.items.forEach((item) => itemKeys.add(keyKind(item)));
      }
      if (record.relevant) relevant.add(record.relevant.length);
      splits.add(record.split ?? '(none)');
      if (record.catalog !== undefined) catalogs.add(record.catalog);
    },
    summary: () => ({
      respondentsPerRequest: respondents.summary(),
      itemsPerRespondent: items.summary(),
      seenPerRequest: seen.summary(),
      requestsWithRelevant: relevant.count,
      ...(relevant.count > 0 ? { relevantPerRequest: relevant.summary() } : {}),
      itemsKeyedBy: itemKeys.summary(),
      splits: splits.summary(),
      catalogs: catalogs.summary(),
    }),
  };
}

export function catalogStats(): StatsCollector<CatalogEntry> {
  const keys = new Set<string>(), itemKeys = new Counts(), attributes = new Counts(), aliases = new Tally();
  let duplicates = 0;
  return {
    add(entry) {
      const key = `${normalizeTitle(entry.title)}\u0000${entry.year ?? ''}\u0000${entry.creator ?? ''}`;
      if (keys.has(key)) duplicates++;
      else keys.add(key);
      itemKeys.add(keyKind(entry));
      aliases.add(entry.aliases?.length ?? 0);
      for (const name of Object.keys(entry.attributes ?? {})) attributes.add(name);
    },
    summary: () => ({
      entriesKeyedBy: itemKeys.summary(),
      // same normalised title and the same year and creator: the catalog check cannot tell them apart
      duplicateEntries: duplicates,
      aliasesPerEntry: aliases.summary(),
      attributes: attributes.summary(),
    }),
  };
}

export function qaStats(): StatsCollector<QaRecord> {
  const answers = new Tally(), respondents = new Tally(), aliases = new Tally(), splits = new Counts();
  return {
    add(record) {
      answers.add(record.answers.length);
      respondents.add(record.answers.reduce((sum, a) => sum + a.count, 0));
      record.answers.forEach((a) => aliases.add(a.aliases?.length ?? 0));
      splits.add(record.split ?? '(none)');
    },
    summary: () => ({
      answersPerQuestion: answers.summary(),
      respondentsPerQuestion: respondents.summary(),
      aliasesPerAnswer: aliases.summary(),
      splits: splits.summary(),
    }),
  };
}

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

export function mathStats(): StatsCollector<MathRecord> {
  const answers = new Counts(), sources = new Counts(), splits = new Counts(), difficulty = new Tally();
  let solutions = 0;
  return {
    add(record) {
      answers.add(NUMBER.test(record.answer.trim()) ? 'number' : 'LaTeX or text');
      if (record.solution !== undefined) solutions++;
      if (record.difficulty !== undefined) difficulty.add(record.difficulty);
      sources.add(record.source ?? '(none)');
      splits.add(record.split ?? '(none)');
    },
    summary: () => ({
      answers: answers.summary(),
      withSolution: solutions,
      withDifficulty: difficulty.count,
      ...(difficulty.count > 0 ? { difficulty: difficulty.summary() } : {}),
      sources: sources.summary(),
      splits: splits.summary(),
    }),
  };
}
