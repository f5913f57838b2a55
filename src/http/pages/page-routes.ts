import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthorizationRequest } from '../../auth/authorize-request.ts';
import { checkAuthorizeRequest, clientRedirect } from '../../auth/authorize-request.ts';
import { approve } from '../../auth/grants.ts';
import { AuditTrail } from '../../kernel/audit/trail.ts';
import { peekLoginLink, redeemLoginLink } from '../../auth/login-links.ts';
import { OAuthError } from '../../auth/oauth-error.ts';
import { chooseAgent } from '../../auth/people.ts';
import type { PasswordSignIns } from '../../auth/password-sign-in.ts';
import { agentsOwnedBy } from '../../kernel/directory/principals.ts';
import { sameText } from '../../auth/secrets.ts';
import type { BrowserSession, SignInHook } from '../../auth/sessions.ts';
import { endSession, findSession, readCookie, sessionCookie, sessionCookieName } from '../../auth/sessions.ts';
import type { Services } from '../../kernel/services.ts';
import { consentPage } from './consent.ts';
import type { ScopeCatalogue } from '../../kernel/access/scopes.ts';
import { loginLinkPage, messagePage } from './messages.ts';
import { fromOwnPage, parseForm, sendPage } from './respond.ts';
import { signInPage } from './signin.ts';

/** What every page route shares: the store, the session cookie and the answers several pages give. */
interface Pages {
  readonly services: Services;
  /** The scopes a client may ask for, and what each lets it do (the consent page). */
  readonly scopes: ScopeCatalogue;
  /** What the products do when a person signs in (startSession). */
  readonly onSignIn: readonly SignInHook[];
  /** Password sign-in, with the counters every sign-in page shares. */
  readonly signIns: PasswordSignIns;
  /** Checks the authorization request again from its parameters; answers the refusal itself when it fails. */
  checked(reply: FastifyReply, params: URLSearchParams): Promise<AuthorizationRequest | undefined>;
  sessionSecret(request: FastifyRequest): string | undefined;
  message(reply: FastifyReply, status: number, title: string, text: string): FastifyReply;
  /** The answer to a form post that did not come from this gateway's own page. */
  notOwnPage(reply: FastifyReply): FastifyReply;
  signIn(reply: FastifyReply, status: number, request: AuthorizationRequest, extra?: { tenant?: string; email?: string; error?: string }): FastifyReply;
  clientName(request: AuthorizationRequest): string;
  queryOf(request: AuthorizationRequest): string;
}

function sharedPages(
  services: Services,
  resources: readonly string[],
  scopes: ScopeCatalogue,
  onSignIn: readonly SignInHook[],
  signIns: PasswordSignIns,
): Pages {
  const { config, db } = services;
  const cookieName = sessionCookieName(config);
  const clientName = (request: AuthorizationRequest) => request.client.clientName ?? request.client.clientId;
  const queryOf = (request: AuthorizationRequest) =>
    new URLSearchParams(Object.entries(request.params).filter((entry): entry is [string, string] => entry[1] !== undefined)).toString();
  const message = (reply: FastifyReply, status: number, title: string, text: string) => sendPage(reply, status, messagePage(config.publicUrl, title, text));
  return {
    services,
    scopes,
    onSignIn,
    signIns,
    async checked(reply, params) {
      const check = await checkAuthorizeRequest(db, config, { resources, scopes }, params);
      if ('page' in check) return void message(reply, 400, check.page.title, check.page.message);
      if ('redirect' in check) return void reply.redirect(check.redirect, 303);
      return check.request;
    },
    sessionSecret: (request) => readCookie(request.headers.cookie, cookieName),
    message,
    notOwnPage: (reply) => message(reply, 403, 'Request refused', 'This form was not sent from this gateway’s own page.'),
    signIn: (reply, status, request, extra = {}) =>
      sendPage(reply, status, signInPage({ publicUrl: config.publicUrl, clientName: clientName(request), authorizeQuery: queryOf(request), ...extra })),
    clientName,
    queryOf,
  };
}

/** GET and POST /oauth/authorize: the consent page for a signed-in person (sign-in otherwise), and its decision. */
function registerConsent(app: FastifyInstance, pages: Pages): void {
  const { services } = pages;
  const { config, db } = services;

  async function consent(reply: FastifyReply, status: number, request: AuthorizationRequest, session: BrowserSession, error?: string) {
    // The agents the person owns: the identities a connection they approve may act as.
    const agents = await agentsOwnedBy(db, session.tenant.id, session.person.id);
    return sendPage(
      reply,
      status,
      consentPage({
        publicUrl: config.publicUrl,
        clientName: pages.clientName(request),
        redirectUri: request.redirectUri,
        resource: request.resource,
        scopes: request.scopes.map((scope) => ({ name: scope, description: pages.scopes.describe(scope) })),
        person: session.person,
        tenantName: session.tenant.name,
        agents,
        fields: request.params,
        authorizeQuery: pages.queryOf(request),
        csrf: session.csrf,
        error,
      }),
    );
  }

  app.get('/oauth/authorize', async (request, reply) => {
    const authorization = await pages.checked(reply, new URLSearchParams(request.url.split('?')[1] ?? ''));
    if (!authorization) return reply;
    const session = await findSession(db, pages.sessionSecret(request));
    return session ? consent(reply, 200, authorization, session) : pages.signIn(reply, 200, authorization);
  });

  app.post('/oauth/authorize', async (request, reply) => {
    if (!fromOwnPage(request, config.publicUrl)) return pages.notOwnPage(reply);
    const form = parseForm(request);
    const authorization = await pages.checked(reply, form);
    if (!authorization) return reply;
    const session = await findSession(db, pages.sessionSecret(request));
    if (!session) return pages.signIn(reply, 401, authorization, { error: 'Your sign-in has expired. Sign in again.' });
    const csrf = form.get('csrf');
    if (csrf === null || !sameText(csrf, session.csrf)) {
      return pages.message(
        reply,
        403,
        'This form has expired',
        'The form did not come from your current sign-in (CSRF check failed). Go back to the app and start the connection again.',
      );
    }
    const decision = form.get('decision');
    if (decision === 'deny') {
      return reply.redirect(
        clientRedirect(config, authorization.redirectUri, {
          error: 'access_denied',
          error_description: 'the person denied the request',
          state: authorization.state,
        }),
        303,
      );
    }
    if (decision !== 'approve') return consent(reply, 400, authorization, session, 'Choose Allow or Deny.');
    const agent = form.get('agent') ?? '';
    const choice = agent === 'new' ? { newName: form.get('new_agent_name') ?? '' } : { agentId: agent };
    let code: string;
    try {
      // One trail for the consent: the agent it may create and the grant, both in its transaction.
      const audit = AuditTrail.forSurface(services.audit, 'oauth').about({ tenantId: session.tenant.id, principalId: session.person.id });
      code = await db.tx(async (tx) => {
        const chosen = await chooseAgent(tx, session.tenant.id, session.person.id, choice);
        if (chosen.created) await audit.recordIn(tx, 'oauth.create_agent', [], { agent_id: chosen.id, name: chosen.name });
        const { client, scopes, resource, redirectUri, codeChallenge } = authorization;
        return approve(
          tx,
          { tenantId: session.tenant.id, personId: session.person.id, agentId: chosen.id, client, scopes, resource, redirectUri, codeChallenge },
          audit,
        );
      });
    } catch (error) {
      if (error instanceof OAuthError) return consent(reply, 400, authorization, session, error.message);
      throw error;
    }
    return reply.redirect(clientRedirect(config, authorization.redirectUri, { code, state: authorization.state }), 303);
  });
}

/** POST /oauth/login: sign-in with organisation, email and password, then on to the consent page. */
function registerSignIn(app: FastifyInstance, pages: Pages): void {
  const { config } = pages.services;
  const continueUrl = (request: AuthorizationRequest) => `${config.publicUrl}/oauth/authorize?${pages.queryOf(request)}`;

  app.post('/oauth/login', async (request, reply) => {
    if (!fromOwnPage(request, config.publicUrl)) return pages.notOwnPage(reply);
    const form = parseForm(request);
    const authorization = await pages.checked(reply, new URLSearchParams(form.get('authorize') ?? ''));
    if (!authorization) return reply;
    const typed = { tenant: form.get('tenant') ?? '', email: form.get('email') ?? '', password: form.get('password') ?? '' };
    const outcome = await pages.signIns.attempt(typed, { address: request.ip, previousSecret: pages.sessionSecret(request), log: request.log });
    if (!outcome.ok) {
      if (outcome.retryAfter !== undefined) reply.header('retry-after', String(outcome.retryAfter));
      const again = { tenant: typed.tenant.trim().toLowerCase(), email: typed.email.trim().toLowerCase(), error: outcome.error };
      return pages.signIn(reply, outcome.status, authorization, again);
    }
    return reply.header('set-cookie', sessionCookie(config, outcome.secret)).redirect(continueUrl(authorization), 303);
  });
}

/** GET and POST /oauth/login/<secret>: a one-time login link, used only by the confirmation's form post. */
function registerLoginLink(app: FastifyInstance, pages: Pages): void {
  const { config, db } = pages.services;
  const badLink = (reply: FastifyReply) =>
    pages.message(reply, 404, 'This sign-in link does not work', 'It was already used, has expired (links last 15 minutes) or is mistyped. Ask for a new one.');

  app.get<{ Params: { secret: string } }>('/oauth/login/:secret', async (request, reply) => {
    const holder = await peekLoginLink(db, request.params.secret);
    return holder ? sendPage(reply, 200, loginLinkPage(config.publicUrl, request.params.secret, holder)) : badLink(reply);
  });

  app.post<{ Params: { secret: string } }>('/oauth/login/:secret', async (request, reply) => {
    if (!fromOwnPage(request, config.publicUrl)) return pages.notOwnPage(reply);
    const secret = await redeemLoginLink(db, request.params.secret, AuditTrail.forSurface(pages.services.audit, 'oauth'), pages.onSignIn);
    if (secret === undefined) return badLink(reply);
    await endSession(db, pages.sessionSecret(request));
    const session = await findSession(db, secret);
    reply.header('set-cookie', sessionCookie(config, secret));
    return pages.message(
      reply,
      200,
      'You are signed in',
      `Signed in as ${session?.person.email ?? ''} (${session?.tenant.name ?? ''}). Open the console at ${config.publicUrl}/console, or go back to the page where you were connecting an app and continue, or start the connection again from the app.`,
    );
  });
}

/** POST /oauth/logout: ends the browser session, then back to the authorization request when there is one. */
function registerSignOut(app: FastifyInstance, pages: Pages): void {
  const { config, db } = pages.services;

  app.post('/oauth/logout', async (request, reply) => {
    if (!fromOwnPage(request, config.publicUrl)) return pages.notOwnPage(reply);
    const form = parseForm(request);
    const secret = pages.sessionSecret(request);
    const session = await findSession(db, secret);
    const csrf = form.get('csrf');
    if (session && (csrf === null || !sameText(csrf, session.csrf)))
      return pages.message(reply, 403, 'This form has expired', 'The form did not come from your current sign-in.');
    await endSession(db, secret);
    reply.header('set-cookie', sessionCookie(config, undefined));
    const authorize = new URLSearchParams(form.get('authorize') ?? '');
    return authorize.has('client_id')
      ? reply.redirect(`${config.publicUrl}/oauth/authorize?${authorize.toString()}`, 303)
      : pages.message(reply, 200, 'Signed out', 'You are signed out.');
  });
}

/**
 * The browser side of OAuth: consent, sign-in, login links and sign-out; `scopes`, what a client
 * may ask for; `onSignIn`, what the products do when a person signs in.
 */
export function registerPageRoutes(
  app: FastifyInstance,
  services: Services,
  resources: readonly string[],
  scopes: ScopeCatalogue,
  onSignIn: readonly SignInHook[],
  signIns: PasswordSignIns,
): void {
  const shared = sharedPages(services, resources, scopes, onSignIn, signIns);
  registerConsent(app, shared);
  registerSignIn(app, shared);
  registerLoginLink(app, shared);
  registerSignOut(app, shared);
}
