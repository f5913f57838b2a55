/**
 * Zod issues as text, for every place that tells a client what was wrong with its input. Kept
 * apart from zod itself (an issue is only its path and message), so that checks of our own that
 * report in the same shape (findUnstorable) read the same way.
 */

/** What is wrong, and where: a zod issue, or one of ours shaped like it. */
export interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * How one issue reads. The texts are what clients have seen so far, so each stays as it is:
 * - 'labelled', `names.1: Invalid input`, the message alone for the value as a whole: MCP tool
 *   arguments and request params.
 * - 'phrase', `names.1 Invalid input`: admin operations. The path is written even when empty, so
 *   an issue with the whole value starts with a space.
 */
export type IssueStyle = 'labelled' | 'phrase';

/** The issue's path, dotted: `env.A`, `names.1`; empty for the value as a whole. */
export function issuePath(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

/** Each issue as one line. */
export function issueLines(issues: readonly Issue[], style: IssueStyle): string[] {
  return issues.map((issue) =>
    style === 'phrase' ? `${issuePath(issue.path)} ${issue.message}` : issue.path.length ? `${issuePath(issue.path)}: ${issue.message}` : issue.message,
  );
}

/** The issues on one line, separated by `; `; with `max`, only the first that many. */
export function issuesText(issues: readonly Issue[], style: IssueStyle, options: { max?: number } = {}): string {
  return issueLines(options.max === undefined ? issues : issues.slice(0, options.max), style).join('; ');
}
