import type { z } from 'zod';

export interface IssueLimits {
  /** Issues listed; the rest are counted ("and 3 more"). */
  maxIssues?: number;
  /** Characters per issue (a path through huge keys, a message listing thousands of unrecognized keys). */
  maxIssueChars?: number;
}

/**
 * Renders zod issues as `a.b[0].c: message` lines, so every error names the field the way the file spells it.
 * Bounded: a hostile record can fail on thousands of fields, and the first ones say what is wrong.
 */
export function formatIssues(error: z.ZodError, root = '', { maxIssues = 10, maxIssueChars = 300 }: IssueLimits = {}): string {
  const shown = error.issues.slice(0, maxIssues).map((issue) => {
    const path = issue.path.reduce<string>(
      (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)),
      root,
    );
    const text = `${path || '(root)'}: ${issue.message}`;
    return text.length <= maxIssueChars ? text : `${text.slice(0, maxIssueChars)}…`;
  });
  const more = error.issues.length - shown.length;
  return more > 0 ? `${shown.join('; ')}; and ${more} more` : shown.join('; ');
}
