// A user's recommendation files (recommend/1 requests, a catalog/1 catalog): read with line-numbered errors and
// keyed for the rewards, films by "Title (Year)", books and music by "Title (Creator)" (creatorTitle, year 0).
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Catalog, type TitleYear } from '../text/catalog.js';
import type { RecItem, SeenEntry } from '../text/records.js';
import { creatorTitle, type ItemKey } from '../text/title.js';
import { dataError, readJsonlSync, type JsonlLocation, type RecordParser } from './jsonl.js';
import { parseCatalogEntry, parseRecommendRecord, type RecRequest } from './schemas.js';
import { holdOut, type Splits } from './splits.js';

const REQUESTS_FILE = 'recommend/1 JSONL: one {"id", "request", "respondents": [{"id", "items"}]} record a line (docs/datasets.md)';
const CATALOG_FILE = 'catalog/1 JSONL: one {"title", "year" or "creator"} record a line (docs/datasets.md)';

/** Where a user's recommendation data lies and how its items are told apart. */
export interface RecommendFiles {
  /** A folder (train.jsonl, and validation.jsonl, test.jsonl, catalog.jsonl where present) or a train file. */
  path: string;
  /** Own validation and test files ("" = the folder's, else held out). */
  validation: string;
  test: string;
  /** The catalog ("" = the folder's catalog.jsonl, else none). */
  catalog: string;
  key: ItemKey;
  heldOut: number;
  splitSeed: number;
}

/** The item as the rewards compare it: a film as it is, a creator-keyed item under creatorTitle with year 0. */
function keyedItem(item: RecItem, key: ItemKey, at: JsonlLocation, path: string): TitleYear {
  const value = key === 'year' ? item.year : item.creator;
  if (value === undefined) {
    const expected = key === 'year' ? 'an integer (data.itemKey is "year")' : 'a string (data.itemKey is "creator")';
    throw dataError(at, `missing (expected ${expected})`, `${path}.${key}`, { expected, received: 'nothing' });
  }
  return key === 'year' ? { title: item.title, year: item.year! } : { title: creatorTitle(item.title, item.creator!), year: 0 };
}

/** A seen entry under the same key; a creator-keyed entry without its creator stays a bare title (it matches no item). */
function keyedSeen(entry: SeenEntry, key: ItemKey): SeenEntry {
  if (typeof entry === 'string' || key === 'year') return entry;
  return entry.creator === undefined ? entry.title : { title: creatorTitle(entry.title, entry.creator), year: 0 };
}

function requestParser(key: ItemKey): RecordParser<RecRequest> {
  return (value, at) => {
    const { respondents, relevant, seen, ...record } = parseRecommendRecord(value, at);
    return {
      ...record,
      seen: seen.map((entry) => keyedSeen(entry, key)),
      respondents: respondents.map((r, i) => ({ id: r.id, items: r.items.map((item, j) => keyedItem(item, key, at, `respondents[${i}].items[${j}]`)) })),
      ...(relevant === undefined ? {} : { relevant: relevant.map((item, j) => keyedItem(item, key, at, `relevant[${j}]`)) }),
    };
  };
}

/** The catalog's entries under `key`, each alias an entry of its own. */
export function readCatalogFile(path: string, key: ItemKey): Catalog {
  const entries = readJsonlSync(path, (value, at) => {
    const entry = parseCatalogEntry(value, at);
    const titles = [entry.title, ...(entry.aliases ?? [])];
    return titles.map((title) => keyedItem({ ...entry, title }, key, at, 'record'));
  }, CATALOG_FILE);
  return Catalog.fromEntries(entries.flat());
}

/** The train, validation and test requests of `files` and their catalog (undefined when there is none). */
export function readRecommendFiles(files: RecommendFiles): Splits<RecRequest> & { catalog?: Catalog } {
  const folder = statSync(files.path, { throwIfNoEntry: false })?.isDirectory() ? files.path : undefined;
  const inFolder = (name: string) => (folder && existsSync(join(folder, name)) ? join(folder, name) : '');
  const requests = (path: string) => (path === '' ? undefined : readJsonlSync(path, requestParser(files.key), REQUESTS_FILE));
  const source = folder ? join(folder, 'train.jsonl') : files.path;
  const splits = holdOut(requests(source)!, {
    validation: requests(files.validation || inFolder('validation.jsonl')), test: requests(files.test || inFolder('test.jsonl')),
    heldOut: files.heldOut, seed: files.splitSeed, source,
  });
  const catalog = files.catalog || inFolder('catalog.jsonl');
  return { ...splits, ...(catalog === '' ? {} : { catalog: readCatalogFile(catalog, files.key) }) };
}
