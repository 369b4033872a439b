// Record shapes that the data layer loads and the rewards read.

/**
 * A recommended item: a title with its release year (films) or its creator (books: the author; music: the
 * artist), or both; at least one of the two, so that equal titles can be told apart.
 */
export interface RecItem {
  title: string;
  year?: number;
  creator?: string;
}

/** A seen item: a bare title (every year) or a title with a year (matched within the year tolerance) and/or creator. */
export type SeenEntry = string | { title: string; year?: number | null; creator?: string };

/** One answer cluster of a multi-answer question: its text, how many respondents gave it, and variants. */
export interface QaAnswer {
  text: string;
  count: number;
  aliases?: readonly string[];
}
