// Public API of grpo-native. Each module re-exported here has one job; see README.md.
export { GrpoError, type GrpoErrorCode } from './errors.js';
