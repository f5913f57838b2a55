/**
 * The console's languages: English, and German where the organisation's language is German (the
 * org file's `language:`). Every text a page shows is a `Text` with both; a product's pages give
 * their own.
 */
export type Lang = 'en' | 'de';

export interface Text {
  readonly en: string;
  readonly de: string;
}

/** The console language for a tenant's language tag (`de`, `de-AT` … German; anything else English). */
export const langOf = (tag: string): Lang => (/^de(?:-|$)/i.test(tag) ? 'de' : 'en');

/** A number as the language writes it (1,234 / 1.234). */
export const count = (lang: Lang, n: number): string => n.toLocaleString(lang === 'de' ? 'de-DE' : 'en-GB');

/** An instant as the language writes it, in UTC (the page says so), to the minute. */
export function when(lang: Lang, at: Date): string {
  const text = at.toLocaleString(lang === 'de' ? 'de-DE' : 'en-GB', {
    timeZone: 'UTC',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });
  return `${text} UTC`;
}

/** A text with its `{name}` places filled. */
export const fill = (text: string, values: Readonly<Record<string, string>>): string => text.replace(/\{(\w+)\}/g, (_, key: string) => values[key] ?? '');

/** The shell's own texts. */
export const SHELL = {
  brand: { en: 'Knowledge Gateway', de: 'Knowledge Gateway' },
  console: { en: 'Console', de: 'Konsole' },
  skip: { en: 'Skip to content', de: 'Zum Inhalt springen' },
  signedInAs: { en: 'Signed in as', de: 'Angemeldet als' },
  signOut: { en: 'Sign out', de: 'Abmelden' },
  signIn: { en: 'Sign in', de: 'Anmelden' },
  signInLead: {
    en: 'Sign in with your organisation, email and password to review what agents propose.',
    de: 'Melden Sie sich mit Organisation, E-Mail und Passwort an, um zu prüfen, was Agenten vorschlagen.',
  },
  organisation: { en: 'Organisation', de: 'Organisation' },
  email: { en: 'Email', de: 'E-Mail' },
  password: { en: 'Password', de: 'Passwort' },
  noPassword: {
    en: 'No password? Ask an administrator for a one-time sign-in link (kgw login-link), open it in this browser, then come back here.',
    de: 'Kein Passwort? Bitten Sie eine Administratorin um einen einmaligen Anmeldelink (kgw login-link), öffnen Sie ihn in diesem Browser und kehren Sie dann hierher zurück.',
  },
  inbox: { en: 'Inbox', de: 'Eingang' },
  notFoundTitle: { en: 'Not found', de: 'Nicht gefunden' },
  notFound: {
    en: 'There is nothing here, or nothing you may see.',
    de: 'Hier ist nichts, oder nichts, was Sie sehen dürfen.',
  },
  expiredTitle: { en: 'This form has expired', de: 'Dieses Formular ist abgelaufen' },
  expired: {
    en: 'The form did not come from your current sign-in. Reload the page and try again.',
    de: 'Das Formular stammt nicht aus Ihrer aktuellen Anmeldung. Laden Sie die Seite neu und versuchen Sie es erneut.',
  },
  refusedTitle: { en: 'Refused', de: 'Abgelehnt' },
  pages: { en: 'Pages', de: 'Seiten' },
  previous: { en: 'Previous page', de: 'Vorherige Seite' },
  next: { en: 'Next page', de: 'Nächste Seite' },
  pageOf: { en: 'Page {page}', de: 'Seite {page}' },
} as const satisfies Record<string, Text>;
