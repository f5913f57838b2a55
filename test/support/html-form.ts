/**
 * The form of a gateway page as a browser submits it: its hidden inputs and the agents offered
 * (the consent page). Shared by the OAuth suites and the sign-in browser of kgw import/export
 * mcp --sign-in (test/fixtures/sign-in-browser.ts), which runs alone and so imports nothing else.
 */

const unescape = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The hidden and radio inputs of a page's first form posting to `action`. */
export function formFields(html: string, action: string): { fields: Record<string, string>; agents: string[] } {
  const start = html.indexOf(`action="${action}"`);
  if (start < 0) throw new Error(`no form posting to ${action} in: ${html.slice(0, 500)}`);
  const form = html.slice(start, html.indexOf('</form>', start));
  const fields: Record<string, string> = {};
  for (const [, name, value] of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[name!] = unescape(value!);
  const agents = [...form.matchAll(/<input type="radio" name="agent" value="([^"]+)"/g)].map((m) => m[1]!);
  return { fields, agents };
}
