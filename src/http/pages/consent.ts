import type { Scope } from '../../kernel/access/scopes.ts';
import { hiddenFields, html, layout } from './html.ts';

export interface ConsentView {
  readonly publicUrl: string;
  readonly clientName: string;
  readonly redirectUri: string;
  readonly resource: string;
  /** What the client asks for, each with what it lets the client do (ScopeDef.description). */
  readonly scopes: readonly { readonly name: Scope; readonly description: string }[];
  readonly person: { readonly name: string; readonly email: string };
  readonly tenantName: string;
  readonly agents: readonly { readonly id: string; readonly name: string }[];
  /** The authorization request's parameters plus the CSRF token. */
  readonly fields: Readonly<Record<string, string | undefined>>;
  readonly authorizeQuery: string;
  readonly csrf: string;
  readonly error?: string | undefined;
}

/** Approve or deny, choosing which of the person's own agents the connection acts as. */
export function consentPage(view: ConsentView): string {
  const agents = view.agents.map(
    (agent, i) => html`<label class="choice"><input type="radio" name="agent" value="${agent.id}"${i === 0 ? html` checked` : ''}> ${agent.name}</label>`,
  );
  return layout(
    view.publicUrl,
    `Connect ${view.clientName}`,
    html`<h1>Connect ${view.clientName}?</h1>
<p class="lead">An app calling itself <strong>${view.clientName}</strong> asks to work with your organisation’s knowledge as one of your agents.</p>
${view.error === undefined ? '' : html`<p class="error" role="alert">${view.error}</p>`}
<dl class="facts">
<dt>Returns to</dt><dd><code>${view.redirectUri}</code></dd>
<dt>Service</dt><dd><code>${view.resource}</code></dd>
<dt>Signed in as</dt><dd>${view.person.name} (${view.person.email}), ${view.tenantName}</dd>
</dl>
<p class="note">The app chose its own name. Allow only if you started this connection and recognise the address it returns to.</p>
<h2>It may</h2>
<ul class="scopes">${view.scopes.map((scope) => html`<li><code>${scope.name}</code>: ${scope.description}</li>`)}</ul>
<form method="post" action="${view.publicUrl}/oauth/authorize">
${hiddenFields({ ...view.fields, csrf: view.csrf })}
<fieldset>
<legend>Act as</legend>
${agents}
<label class="choice"><input type="radio" name="agent" value="new"${view.agents.length === 0 ? html` checked` : ''}> A new agent named <input type="text" name="new_agent_name" maxlength="100" aria-label="New agent name" placeholder="e.g. ${view.clientName.slice(0, 40)}"></label>
</fieldset>
<div class="actions"><button type="submit" name="decision" value="approve">Allow</button><button type="submit" name="decision" value="deny" class="secondary">Deny</button></div>
</form>
<form method="post" action="${view.publicUrl}/oauth/logout">
${hiddenFields({ csrf: view.csrf, authorize: view.authorizeQuery })}
<p class="note">Not ${view.person.name}? <button type="submit" class="link">Sign out</button></p>
</form>`,
  );
}
