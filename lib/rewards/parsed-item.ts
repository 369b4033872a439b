// The shape every item parser returns (items.ts, items-rankgrpo.ts).

/**
 * One recommended item of a completion, in list order.
 * `span` is `[start, end)` in UTF-16 code units of the original text (JS string indices): the line's
 * extent without surrounding whitespace, so a tokenizer's character offsets can be mapped onto it.
 */
export interface ParsedItem {
  /** Cleaned title as written (not normalised); for a `format` item, the line's text after its marker. */
  title: string;
  /** Release year, or null when the line has a list marker but no parsable "(YYYY)" (a `format` item). */
  year: number | null;
  /** `[start, end)` character span of the item's line in the original text. */
  span: [number, number];
  /** 0-based index of the line in the text (lines split on "\n"). */
  line: number;
}

/** Items of one completion, plus the count of non-empty lines that were not items (preambles, comments). */
export interface ParseResult {
  items: ParsedItem[];
  skippedLines: number;
}
