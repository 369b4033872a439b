// Files and folders a user names (checkpoints, tokenizers, data sets): when one cannot be read, the
// error names the path, what was expected there and why (not a bare ENOENT from node:fs).
import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { GrpoError } from './errors.js';

const REASONS: Record<string, string> = {
  ENOENT: 'it does not exist',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'it is a folder',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/** `GRPO_INVALID_ARGUMENT` for a path that could not be read, e.g. "Cannot read a.jsonl (expected GSM8K JSONL: …): ENOENT, it does not exist". */
export function unreadable(path: string | URL, expected: string, error: unknown): GrpoError {
  const code = (error as NodeJS.ErrnoException)?.code;
  const reason = code === undefined ? (error as Error)?.message ?? String(error) : `${code}${REASONS[code] ? `, ${REASONS[code]}` : ''}`;
  const shown = path instanceof URL && path.protocol === 'file:' ? fileURLToPath(path) : String(path);
  return new GrpoError('GRPO_INVALID_ARGUMENT', `Cannot read ${shown} (expected ${expected}): ${reason}`, { cause: error });
}

/** The UTF-8 text of a user's file; {@link unreadable} when it cannot be read. */
export async function readUserText(path: string | URL, expected: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw unreadable(path, expected, error);
  }
}

/** {@link readUserText}, synchronously. */
export function readUserTextSync(path: string | URL, expected: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw unreadable(path, expected, error);
  }
}

/** Throws {@link unreadable} unless `dir` is a folder. */
export function requireFolder(dir: string, expected: string): void {
  let isFolder: boolean;
  try {
    isFolder = statSync(dir).isDirectory();
  } catch (error) {
    throw unreadable(dir, expected, error);
  }
  if (!isFolder) throw unreadable(dir, expected, new Error('it is a file, not a folder'));
}

/** A user's JSON file, parsed: {@link unreadable} when it cannot be read, `GRPO_DATA_FORMAT` when it is not JSON. */
export async function readUserJson(path: string, expected: string): Promise<unknown> {
  const text = await readUserText(path, expected);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new GrpoError('GRPO_DATA_FORMAT', `${path}: not valid JSON (${(error as Error).message})`, { cause: error });
  }
}
