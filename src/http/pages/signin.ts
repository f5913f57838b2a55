import { html, layout } from './html.ts';

export interface SignInView {
  readonly publicUrl: string;
  readonly clientName: string;
  /** The authorization request's query string, carried through the form. */
  readonly authorizeQuery: string;
  readonly tenant?: string | undefined;
  readonly email?: string | undefined;
  readonly error?: string | undefined;
}

/** Sign-in with organisation, email and password; or a one-time link from an administrator. */
export function signInPage(view: SignInView): string {
  const continueUrl = `${view.publicUrl}/oauth/authorize?${view.authorizeQuery}`;
  return layout(
    view.publicUrl,
    'Sign in',
    html`<h1>Sign in to connect ${view.clientName}</h1>
<p class="lead">Sign in, then choose which of your agents <strong>${view.clientName}</strong> may act as.</p>
${view.error === undefined ? '' : html`<p class="error" role="alert">${view.error}</p>`}
<form method="post" action="${view.publicUrl}/oauth/login">
<input type="hidden" name="authorize" value="${view.authorizeQuery}">
<label>Organisation <input name="tenant" autocomplete="organization" autocapitalize="none" spellcheck="false" required maxlength="63" value="${view.tenant ?? ''}"></label>
<label>Email <input name="email" type="email" autocomplete="username" required maxlength="254" value="${view.email ?? ''}"></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required maxlength="1024"></label>
<div class="actions"><button type="submit">Sign in</button></div>
</form>
<details>
<summary>No password?</summary>
<p>Ask an administrator for a one-time sign-in link (<code>kgw login-link you@example.com --tenant ORG</code>), open it in this browser, then <a href="${continueUrl}">continue here</a>.</p>
</details>`,
  );
}
