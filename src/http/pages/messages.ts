import { html, layout } from './html.ts';

/** A page that only tells something: an error before the client can be trusted, or a result. */
export function messagePage(publicUrl: string, title: string, message: string): string {
  return layout(publicUrl, title, html`<h1>${title}</h1><p>${message}</p>`);
}

/** The confirmation step of a login link, so that link scanners fetching it do not use it up. */
export function loginLinkPage(publicUrl: string, secret: string, holder: { email: string; tenantName: string }): string {
  return layout(
    publicUrl,
    'Sign in',
    html`<h1>Sign in as ${holder.email}?</h1>
<p class="lead">This one-time link signs you in to ${holder.tenantName} in this browser.</p>
<form method="post" action="${publicUrl}/oauth/login/${secret}">
<div class="actions"><button type="submit">Sign in</button></div>
</form>`,
  );
}
