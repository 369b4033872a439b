// Record shapes that the data layer loads and the rewards read.

/** A seen film: a bare title (every year) or a title with a year (matched within the year tolerance). */
export type SeenEntry = string | { title: string; year?: number | null };

/** One answer cluster of a multi-answer question: its text, how many respondents gave it, and variants. */
export interface QaAnswer {
  text: string;
  count: number;
  aliases?: readonly string[];
}
