import type { z } from 'zod';

/** Renders zod issues as `a.b[0].c: message` lines, so every error names the field the way the file spells it. */
export function formatIssues(error: z.ZodError, root = ''): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.reduce<string>(
        (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)),
        root,
      );
      return `${path || '(root)'}: ${issue.message}`;
    })
    .join('; ');
}
