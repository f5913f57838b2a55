import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PasswordSignIns } from '../auth/password-sign-in.ts';
import { SIGN_IN_BOUNDS } from '../auth/password-sign-in.ts';
import { sameText } from '../auth/secrets.ts';
import type { BrowserSession } from '../auth/sessions.ts';
import { endSession, findSession, readCookie, sessionCookie, sessionCookieName } from '../auth/sessions.ts';
import type { Scope } from '../kernel/access/scopes.ts';
import { AuditTrail } from '../kernel/audit/trail.ts';
import { importingPerson } from '../kernel/directory/directory.ts';
import type { KgwError } from '../kernel/errors.ts';
import { isKgwError } from '../kernel/errors.ts';
import type { Services } from '../kernel/services.ts';
import { unstorableText, visibleText } from '../kernel/text.ts';
import { html } from '../http/pages/html.ts';
import { fromOwnPage } from '../http/pages/respond.ts';
import { bodyText } from '../http/utf8.ts';
import type { ConsolePerson, ConsoleSection, InboxSource, SectionAnswer, SectionRoute } from './contract.ts';
import { INBOX_NOTE_MAX_CHARS, inboxDetailPage, inboxListPage, readInboxQuery } from './inbox-pages.ts';
import type { Frame } from './page.ts';
import { CONSOLE_PATH, consolePage } from './page.ts';
import type { Lang } from './text.ts';
import { SHELL, langOf } from './text.ts';

/** A console form is small: a note, a few choices (README, Hardening). */
export const CONSOLE_BODY_LIMIT = 64 * 1024;

const STATIC: Readonly<Record<string, { type: string; body: string }>> = {
  'console.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('./static/console.css', import.meta.url), 'utf8') },
  'console.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('./static/console.js', import.meta.url), 'utf8') },
};

/**
 * Every console answer: nothing from another origin, no inline script or style, no framing,
 * nothing cached (the pages hold what only this person may read). `connectSources`: origins a
 * page's script may send to besides this gateway (the blob store's presigned uploads).
 */
function consoleHeaders(reply: FastifyReply, connectSources: readonly string[]): void {
  const connect = ["'self'", ...connectSources].join(' ');
  reply
    .header(
      'content-security-policy',
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src ${connect}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    )
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cache-control', 'no-store');
}

export interface ConsoleOptions {
  /** The products' inbox sources (src/products.ts). */
  readonly inbox: readonly InboxSource[];
  /** The sections after the inbox, in the navigation's order: the products' and the shell's own. */
  readonly sections: readonly ConsoleSection[];
  /** The scopes a person's console caller holds: every one, so that only their roles decide. */
  readonly scopes: readonly Scope[];
  readonly signIns: PasswordSignIns;
  /** Origins a page's script may send to besides the gateway's own (CSP connect-src): the S3 endpoint presigned uploads go to. */
  readonly connectSources?: readonly string[];
}

/** The HTTP status a refusal's code means on a page. */
const STATUS_OF: Readonly<Partial<Record<KgwError['code'], number>>> = {
  validation: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  unavailable: 503,
};

/** A form a console page posted, or why it cannot be read. */
type Posted = { readonly form: URLSearchParams } | { readonly problem: string };

/**
 * One percent-encoded form value as UTF-8, or undefined when its bytes are not: URLSearchParams
 * would turn `%ED%A0%80` (an encoded lone surrogate) or a stray `%FF` into U+FFFD and store the
 * text changed without a word.
 */
function formValue(raw: string): string | undefined {
  const text = raw.replace(/\+/g, ' ');
  const parts: Buffer[] = [];
  let last = 0;
  for (const match of text.matchAll(/%([0-9A-Fa-f]{2})/g)) {
    parts.push(Buffer.from(text.slice(last, match.index), 'utf8'), Buffer.from([Number.parseInt(match[1] ?? '0', 16)]));
    last = match.index + 3;
  }
  parts.push(Buffer.from(text.slice(last), 'utf8'));
  const bytes = Buffer.concat(parts);
  return isUtf8(bytes) ? bytes.toString('utf8') : undefined;
}

function readForm(request: FastifyRequest): Posted {
  if (!/^application\/x-www-form-urlencoded\s*(?:;|$)/i.test(request.headers['content-type'] ?? ''))
    return { problem: 'the form must be sent as application/x-www-form-urlencoded' };
  const text = bodyText(request.body);
  if ('problem' in text) return { problem: text.problem };
  const form = new URLSearchParams();
  for (const pair of text.text.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    const key = formValue(at === -1 ? pair : pair.slice(0, at));
    const value = formValue(at === -1 ? '' : pair.slice(at + 1));
    if (key === undefined || value === undefined) return { problem: 'a field is not UTF-8 once percent-decoded' };
    if (form.has(key)) return { problem: `the field ${visibleText(key, { inline: true })} is repeated` };
    // What the store cannot hold is refused here, before any product sees it.
    const problem = unstorableText(value);
    if (problem !== undefined) return { problem: `the field ${visibleText(key, { inline: true })} ${problem}` };
    form.append(key, value);
  }
  return { form };
}

/**
 * The web console at /console (docs/console.md): sign-in, and the inbox of every item the
 * person may decide, from every product that offers one. Each request finds the session again
 * and acts as its person through the products' own functions: nothing here decides who may.
 */
export function registerConsoleRoutes(app: FastifyInstance, services: Services, options: ConsoleOptions): void {
  const { config, db } = services;
  const base = config.publicUrl;
  const cookieName = sessionCookieName(config);
  const consoleUrl = (path = '') => `${base}${CONSOLE_PATH}${path}`;
  const sources = new Map(options.inbox.map((source) => [source.id, source]));
  const assets = new Map(
    options.sections.flatMap((section) =>
      (section.assets ?? []).map((asset) => {
        let body: string | Buffer | undefined;
        return [`${section.id}/${asset.name}`, { type: asset.type, body: () => (body ??= asset.read()) }] as const;
      }),
    ),
  );

  const sessionOf = (request: FastifyRequest) => findSession(db, readCookie(request.headers.cookie, cookieName));
  async function personOf(session: BrowserSession): Promise<ConsolePerson | undefined> {
    // The person again, from the directory: one removed since signing in has no console.
    const caller = await importingPerson(db, session.tenant.slug, session.person.email, options.scopes).catch((error: unknown) => {
      if (isKgwError(error)) return undefined;
      throw error;
    });
    if (caller === undefined) return undefined;
    return {
      services,
      tenant: session.tenant,
      person: session.person,
      caller,
      lang: langOf(session.tenant.language),
      audit: AuditTrail.forSurface(services.audit, 'console').about({ tenantId: session.tenant.id, principalId: session.person.id }),
    };
  }
  // Which sections a person sees, asked once per request (a ConsolePerson lives for one): the
  // navigation and the section's own page both need it.
  const seen = new WeakMap<ConsolePerson, Map<string, Promise<boolean>>>();
  function sees(who: ConsolePerson, section: ConsoleSection): Promise<boolean> {
    let known = seen.get(who);
    if (known === undefined) seen.set(who, (known = new Map<string, Promise<boolean>>()));
    let answer = known.get(section.id);
    if (answer === undefined) known.set(section.id, (answer = section.visibleTo(who)));
    return answer;
  }
  async function frameOf(who: ConsolePerson, session: BrowserSession, section: Frame['section']): Promise<Frame> {
    const visible = await Promise.all(options.sections.map((candidate) => sees(who, candidate)));
    const sections = options.sections.filter((_, index) => visible[index]).map((candidate) => ({ id: candidate.id, label: candidate.label[who.lang] }));
    return { base, lang: who.lang, person: who.person, tenantName: who.tenant.name, csrf: session.csrf, section, sections };
  }
  const send = (reply: FastifyReply, status: number, page: string) => reply.code(status).type('text/html; charset=utf-8').send(page);
  const message = (reply: FastifyReply, status: number, lang: Lang, title: string, text: string, frame?: Frame) =>
    send(reply, status, consolePage(base, lang, title, html`<h1>${title}</h1><p>${text}</p>`, frame));
  const signInPage = (lang: Lang, extra: { tenant?: string; email?: string; error?: string } = {}) =>
    consolePage(
      base,
      lang,
      SHELL.signIn[lang],
      html`<section class="narrow">
<h1>${SHELL.signIn[lang]}</h1>
<p class="lead">${SHELL.signInLead[lang]}</p>
${extra.error === undefined ? '' : html`<p class="error" role="alert">${extra.error}</p>`}
<form method="post" action="${consoleUrl('/signin')}">
<label>${SHELL.organisation[lang]} <input name="tenant" autocomplete="organization" autocapitalize="none" spellcheck="false" required maxlength="${SIGN_IN_BOUNDS.tenantChars}" value="${extra.tenant ?? ''}"></label>
<label>${SHELL.email[lang]} <input name="email" type="email" autocomplete="username" required maxlength="${SIGN_IN_BOUNDS.emailChars}" value="${extra.email ?? ''}"></label>
<label>${SHELL.password[lang]} <input name="password" type="password" autocomplete="current-password" required maxlength="${SIGN_IN_BOUNDS.passwordChars}"></label>
<div class="actions"><button type="submit">${SHELL.signIn[lang]}</button></div>
</form>
<p class="note">${SHELL.noPassword[lang]}</p>
</section>`,
    );

  /** The signed-in person of a page request, or the answer that sends the browser to sign in. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply): Promise<{ who: ConsolePerson; session: BrowserSession } | undefined> {
    const session = await sessionOf(request);
    const who = session === undefined ? undefined : await personOf(session);
    if (session === undefined || who === undefined) {
      void reply.redirect(consoleUrl('/signin'), 303);
      return undefined;
    }
    return { who, session };
  }

  /** A posted form from this person's own page (Origin and the session's CSRF value), or the refusal already sent. */
  async function postedBy(
    request: FastifyRequest,
    reply: FastifyReply,
    section = 'inbox',
  ): Promise<{ who: ConsolePerson; session: BrowserSession; form: URLSearchParams } | undefined> {
    const session = await sessionOf(request);
    const who = session === undefined ? undefined : await personOf(session);
    const lang = who?.lang ?? 'en';
    if (!fromOwnPage(request, base) || session === undefined || who === undefined) {
      void message(reply, session === undefined ? 401 : 403, lang, SHELL.expiredTitle[lang], SHELL.expired[lang]);
      return undefined;
    }
    const posted = readForm(request);
    if ('problem' in posted) {
      void message(reply, 400, lang, SHELL.refusedTitle[lang], posted.problem, await frameOf(who, session, section));
      return undefined;
    }
    const csrf = posted.form.get('csrf');
    if (csrf === null || !sameText(csrf, session.csrf)) {
      void message(reply, 403, lang, SHELL.expiredTitle[lang], SHELL.expired[lang], await frameOf(who, session, section));
      return undefined;
    }
    return { who, session, form: posted.form };
  }

  /** The page of a section's answer, or the refusal its KgwError means, in the frame. */
  async function answer(reply: FastifyReply, who: ConsolePerson, session: BrowserSession, section: ConsoleSection, run: () => Promise<SectionAnswer>) {
    const frame = await frameOf(who, session, section.id);
    let result: SectionAnswer;
    try {
      result = await run();
    } catch (error) {
      if (!isKgwError(error)) throw error;
      const status = STATUS_OF[error.code] ?? 400;
      const title = status === 404 ? SHELL.notFoundTitle[who.lang] : SHELL.refusedTitle[who.lang];
      return message(reply, status, who.lang, title, status === 404 ? SHELL.notFound[who.lang] : visibleText(error.message), frame);
    }
    if ('redirect' in result) return reply.redirect(result.redirect, 303);
    if ('download' in result)
      return reply
        .header('content-disposition', `attachment; filename="${result.download.name.replace(/[^\w.-]/g, '_')}"`)
        .type(result.download.type)
        .send(result.download.body);
    const scripts = (result.page.scripts ?? []).map((name) => `${encodeURIComponent(section.id)}/${encodeURIComponent(name)}`);
    return send(reply, result.page.status ?? 200, consolePage(base, who.lang, result.page.title, result.page.body, frame, scripts));
  }

  function registerSectionRoute(scope: FastifyInstance, section: ConsoleSection, route: SectionRoute): void {
    const url = `${CONSOLE_PATH}/${section.id}${route.path}`;
    const queryOf = (request: FastifyRequest) => new URLSearchParams(request.url.split('?')[1] ?? '');
    const notVisible = async (reply: FastifyReply, who: ConsolePerson, session: BrowserSession) =>
      message(reply, 404, who.lang, SHELL.notFoundTitle[who.lang], SHELL.notFound[who.lang], await frameOf(who, session, 'inbox'));
    if (route.method === 'GET')
      scope.get(url, async (request: FastifyRequest<{ Params: Record<string, string> }>, reply) => {
        const signed = await signedIn(request, reply);
        if (signed === undefined) return reply;
        if (!(await sees(signed.who, section))) return notVisible(reply, signed.who, signed.session);
        return answer(reply, signed.who, signed.session, section, () =>
          route.handle(signed.who, { params: request.params, query: queryOf(request), form: undefined, csrf: signed.session.csrf }),
        );
      });
    else
      scope.post(url, async (request: FastifyRequest<{ Params: Record<string, string> }>, reply) => {
        const posted = await postedBy(request, reply, section.id);
        if (posted === undefined) return reply;
        if (!(await sees(posted.who, section))) return notVisible(reply, posted.who, posted.session);
        return answer(reply, posted.who, posted.session, section, () =>
          route.handle(posted.who, { params: request.params, query: queryOf(request), form: posted.form, csrf: posted.session.csrf }),
        );
      });
  }

  void app.register((scope, _options, done) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: CONSOLE_BODY_LIMIT }, (_request, body, finish) => finish(null, body));
    scope.addHook('onRequest', async (_request, reply) => consoleHeaders(reply, options.connectSources ?? []));
    scope.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
      const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
      if (status === 500) request.log.error({ err: error }, 'console request failed');
      const text =
        status === 413
          ? `The form is larger than ${CONSOLE_BODY_LIMIT / 1024} KiB.`
          : status === 500
            ? `Internal error; request id ${request.id}.`
            : error.message;
      return message(reply, status, 'en', SHELL.refusedTitle.en, text);
    });

    scope.get(`${CONSOLE_PATH}/static/:file`, (request: FastifyRequest<{ Params: { file: string } }>, reply) => {
      const file = STATIC[request.params.file];
      if (file === undefined) return message(reply, 404, 'en', SHELL.notFoundTitle.en, SHELL.notFound.en);
      return reply.header('cache-control', 'public, max-age=3600').type(file.type).send(file.body);
    });
    // A section's assets are public as the console's own are: code, never data.
    scope.get(`${CONSOLE_PATH}/static/:section/:file`, (request: FastifyRequest<{ Params: { section: string; file: string } }>, reply) => {
      const file = assets.get(`${request.params.section}/${request.params.file}`);
      if (file === undefined) return message(reply, 404, 'en', SHELL.notFoundTitle.en, SHELL.notFound.en);
      return reply.header('cache-control', 'public, max-age=3600').type(file.type).send(file.body());
    });
    scope.get(CONSOLE_PATH, (_request, reply) => reply.redirect(consoleUrl('/inbox'), 303));

    scope.get(`${CONSOLE_PATH}/signin`, async (request, reply) => {
      const session = await sessionOf(request);
      if (session !== undefined && (await personOf(session)) !== undefined) return reply.redirect(consoleUrl('/inbox'), 303);
      return send(reply, 200, signInPage('en'));
    });
    scope.post(`${CONSOLE_PATH}/signin`, async (request, reply) => {
      if (!fromOwnPage(request, base)) return message(reply, 403, 'en', SHELL.expiredTitle.en, SHELL.expired.en);
      const posted = readForm(request);
      if ('problem' in posted) return send(reply, 400, signInPage('en', { error: posted.problem }));
      const typed = { tenant: posted.form.get('tenant') ?? '', email: posted.form.get('email') ?? '', password: posted.form.get('password') ?? '' };
      const previousSecret = readCookie(request.headers.cookie, cookieName);
      const outcome = await options.signIns.attempt(typed, { address: request.ip, previousSecret, log: request.log });
      if (!outcome.ok) {
        if (outcome.retryAfter !== undefined) reply.header('retry-after', String(outcome.retryAfter));
        return send(reply, outcome.status, signInPage('en', { tenant: typed.tenant.trim(), email: typed.email.trim(), error: outcome.error }));
      }
      return reply.header('set-cookie', sessionCookie(config, outcome.secret)).redirect(consoleUrl('/inbox'), 303);
    });
    scope.post(`${CONSOLE_PATH}/signout`, async (request, reply) => {
      const posted = await postedBy(request, reply);
      if (posted === undefined) return reply;
      await endSession(db, readCookie(request.headers.cookie, cookieName));
      return reply.header('set-cookie', sessionCookie(config, undefined)).redirect(consoleUrl('/signin'), 303);
    });

    scope.get(`${CONSOLE_PATH}/inbox`, async (request: FastifyRequest<{ Querystring: Record<string, string | string[] | undefined> }>, reply) => {
      const signed = await signedIn(request, reply);
      if (signed === undefined) return reply;
      const query = readInboxQuery(request.query, options.inbox);
      const lists = await Promise.all(options.inbox.map(async (source) => ({ source, entries: await source.list(signed.who) })));
      return send(reply, 200, inboxListPage(signed.who, await frameOf(signed.who, signed.session, 'inbox'), options.inbox, lists, query));
    });

    const showItem = async (
      reply: FastifyReply,
      signed: { who: ConsolePerson; session: BrowserSession },
      source: InboxSource | undefined,
      id: string,
      status: number,
      alert?: string,
    ) => {
      const { who, session } = signed;
      const frame = await frameOf(who, session, 'inbox');
      const detail = source === undefined ? undefined : await source.show(who, id);
      if (source === undefined || detail === undefined) return message(reply, 404, who.lang, SHELL.notFoundTitle[who.lang], SHELL.notFound[who.lang], frame);
      return send(reply, status, inboxDetailPage(who, frame, source, detail, alert));
    };

    scope.get(`${CONSOLE_PATH}/inbox/:source/:id`, async (request: FastifyRequest<{ Params: { source: string; id: string } }>, reply) => {
      const signed = await signedIn(request, reply);
      if (signed === undefined) return reply;
      return showItem(reply, signed, sources.get(request.params.source), request.params.id, 200);
    });
    scope.post(`${CONSOLE_PATH}/inbox/:source/:id`, async (request: FastifyRequest<{ Params: { source: string; id: string } }>, reply) => {
      const posted = await postedBy(request, reply);
      if (posted === undefined) return reply;
      const { who, form } = posted;
      const source = sources.get(request.params.source);
      const id = request.params.id;
      if (source === undefined) return showItem(reply, posted, undefined, id, 404);
      const decision = form.get('decision');
      const note = form.get('note')?.trim() ?? '';
      if (decision !== 'accept' && decision !== 'reject') return showItem(reply, posted, source, id, 400, 'Choose accept or reject.');
      if ([...note].length > INBOX_NOTE_MAX_CHARS)
        return showItem(reply, posted, source, id, 400, `The note is longer than ${INBOX_NOTE_MAX_CHARS} characters.`);
      try {
        if (decision === 'accept') await source.accept(who, id, form);
        else await source.reject(who, id, note === '' ? undefined : note);
      } catch (error) {
        if (!isKgwError(error)) throw error;
        // The source decides only what the person may see (InboxSource): one they may not is
        // unknown to them, and its page says no more than an unknown one's.
        if (error.code === 'not_found') return showItem(reply, posted, undefined, id, 404);
        // Someone else decided meanwhile, or the product refused: the item as it is now, with why.
        const status = STATUS_OF[error.code] ?? 400;
        return showItem(reply, posted, source, id, status, error.message);
      }
      return reply.redirect(consoleUrl(`/inbox/${encodeURIComponent(source.id)}/${encodeURIComponent(id)}`), 303);
    });
    for (const section of options.sections) for (const route of section.routes) registerSectionRoute(scope, section, route);
    // Any other console address is the same Not found page as a section the person may not see
    // (the router tries it last), so an address tells nothing about what exists or who may see it.
    scope.get(`${CONSOLE_PATH}/*`, async (request, reply) => {
      const signed = await signedIn(request, reply);
      if (signed === undefined) return reply;
      const { who, session } = signed;
      return message(reply, 404, who.lang, SHELL.notFoundTitle[who.lang], SHELL.notFound[who.lang], await frameOf(who, session, 'inbox'));
    });
    done();
  });
}
