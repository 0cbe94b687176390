// Kilo runs OpenCode's translator: the same folds.
export { folds } from '../opencode/folds.ts';
