// Text primitives below both the data layer and the rewards: catalogs, title normalisation and cleaning, line
// spans, \boxed{…} parsing, and the record shapes both read.
export { closingBrace, findBoxed, lastBoxed, type BoxedMatch } from './boxed.js';
export { Catalog, formatCatalogIndex, type TitleYear } from './catalog.js';
export { itemKey, normalizeTitle, TITLE_NORMALIZATIONS, type TitleNormalization } from './normalize.js';
export type { QaAnswer, RecItem, SeenEntry } from './records.js';
export { cleanTitle, isCleanTitle } from './title.js';
