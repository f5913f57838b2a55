import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientMetadata, OAuthClientProvider, StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import { BUILD } from '../build.ts';
import { printNotice } from './terminal.ts';

/**
 * Signing in at another MCP endpoint as a desktop client does (`kgw import mcp --sign-in`,
 * `kgw export mcp --sign-in`): the SDK's OAuth client registers itself dynamically, sends the
 * person to the endpoint's authorization page with a PKCE challenge, and the code comes back to
 * a one-shot HTTP listener on the loopback address (RFC 8252). The page is opened with the
 * command KGW_BROWSER names, or the system's opener, and its address is printed too, for a
 * machine without a browser. Nothing is written to disk: the tokens live as long as the command,
 * which refreshes them through the SDK when they expire.
 */

/** How long the sign-in page may wait for the person. */
export const SIGN_IN_TIMEOUT_MS = 5 * 60_000;

/** The provider the SDK's transport authenticates with, and what it learnt. */
export class LoopbackSignIn implements OAuthClientProvider {
  private client: StoredOAuthClientInformation | undefined;
  private saved: StoredOAuthTokens | undefined;
  private verifier = '';
  private readonly expectedState = randomBytes(16).toString('base64url');
  /** The authorization page the SDK asked to open, once it did. */
  authorizationUrl: URL | undefined;

  private readonly callback: URL;
  private readonly scope: string | undefined;

  constructor(callback: URL, scope: string | undefined) {
    this.callback = callback;
    this.scope = scope;
  }

  get redirectUrl(): string {
    return this.callback.href;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: `kgw ${BUILD.version}`,
      redirect_uris: [this.callback.href],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.scope === undefined ? {} : { scope: this.scope }),
    };
  }

  state(): string {
    return this.expectedState;
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.client;
  }

  saveClientInformation(information: StoredOAuthClientInformation): void {
    this.client = information;
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }

  /** Whether `state` is the one this sign-in sent (a callback with another is not ours). */
  isOurs(state: string | null): boolean {
    return state === this.expectedState;
  }
}

/** The one-shot listener on the loopback address that the authorization server sends the person back to. */
export interface Callback {
  readonly url: URL;
  /** The callback's parameters (the code, the state), once the person approved; refused when they declined, or the time ran out. */
  code(provider: LoopbackSignIn): Promise<URLSearchParams>;
  close(): Promise<void>;
}

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:system-ui;margin:3em"><h1>${title}</h1><p>${text}</p></body>`;

export async function listenForCode(timeoutMs = SIGN_IN_TIMEOUT_MS): Promise<Callback> {
  let settle: { resolve: (params: URLSearchParams) => void; reject: (error: Error) => void } | undefined;
  let provider: LoopbackSignIn | undefined;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback' || provider === undefined || !provider.isOurs(url.searchParams.get('state'))) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const code = url.searchParams.get('code');
    const error = url.searchParams.get('error');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    if (code !== null && code !== '') {
      res.end(PAGE('Signed in', 'kgw has what it needs. You can close this tab and return to the terminal.'));
      settle?.resolve(url.searchParams);
    } else {
      res.end(PAGE('Not signed in', 'The sign-in was declined. You can close this tab.'));
      settle?.reject(new Error(`the sign-in was not approved (${error ?? 'no code'})`));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: new URL(`http://127.0.0.1:${port}/callback`),
    code(signIn) {
      provider = signIn;
      return new Promise<URLSearchParams>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no sign-in within ${timeoutMs / 60_000} minutes`)), timeoutMs);
        settle = {
          resolve: (params) => (clearTimeout(timer), resolve(params)),
          reject: (error) => (clearTimeout(timer), reject(error)),
        };
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Opens the sign-in page: with KGW_BROWSER (a command given the address as its one argument),
 * else the system's opener. The address is always printed, so a person on a machine without a
 * browser can open it elsewhere (the loopback callback must then be reached from there).
 */
export function openInBrowser(url: URL): void {
  printNotice(`Sign in at ${url.href}`);
  const command = process.env['KGW_BROWSER'];
  const [program, ...args] =
    command !== undefined && command !== ''
      ? [command, url.href]
      : process.platform === 'darwin'
        ? ['open', url.href]
        : process.platform === 'win32'
          ? ['cmd', '/c', 'start', '', url.href]
          : ['xdg-open', url.href];
  try {
    // The opener's own output and failures are not ours: the printed address stands for it.
    const child = spawn(program, args, { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // As above: the address was printed.
  }
}
