import { html } from '../../http/pages/html.ts';
import { checkReadiness } from '../../kernel/health/readiness.ts';
import { searchProvisioning } from '../../kernel/health/search.ts';
import { projectionStatus } from '../../kernel/outbox/outbox.ts';
import type { ConsolePerson, SectionAnswer } from '../contract.ts';
import { count, fill } from '../text.ts';
import { readable, timeView } from '../views.ts';
import { B } from './org-texts.ts';

/**
 * The Admin section's Backends page: what /readyz answers (each backend's probe, the projections'
 * lag) and whether search is provisioned, as Atmina's `health` tool says it, from the same kernel
 * functions, read when the page is asked for. Nothing here is the tenant's own: /readyz shows
 * the same to anyone who can reach the gateway.
 */
export async function backendsPage(who: ConsolePerson): Promise<SectionAnswer> {
  const { lang, services } = who;
  const names = services.projections.projections.map((p) => p.name);
  const readiness = await checkReadiness(services.probes);
  const [projections, search] = await Promise.all([
    projectionStatus(services.db, names),
    searchProvisioning(services.db, { configured: true, projections: names }, readiness),
  ]);
  const state = (ok: boolean) => (ok ? html`<span class="badge">${B.ok[lang]}</span>` : html`<span class="badge warn">${B.failing[lang]}</span>`);
  return {
    page: {
      title: B.backends[lang],
      body: html`<h1>${B.backends[lang]}</h1>
<p class="lead">${readiness.ok ? B.ready[lang] : B.notReady[lang]}</p>
<p class="note">${fill(B.build[lang], { name: readable(services.build.name), version: readable(services.build.version), node: readable(services.build.node) })}</p>
<div class="scroll"><table class="list">
<caption>${B.probes[lang]}</caption>
<thead><tr><th scope="col">${B.role[lang]}</th><th scope="col">${B.backend[lang]}</th><th scope="col">${B.state[lang]}</th><th scope="col">${B.latency[lang]}</th></tr></thead>
<tbody>${readiness.checks.map(
        (check) =>
          html`<tr><td>${readable(check.role)}</td><td>${readable(check.backend)}</td><td>${state(check.ok)}${check.error === undefined ? '' : html`<br><span class="note">${readable(check.error)}</span>`}</td><td>${count(lang, check.latencyMs)} ms</td></tr>`,
      )}</tbody>
</table></div>
<h2>${B.search[lang]}</h2>
<dl class="facts">
<dt>${B.backend[lang]}</dt><dd>${readable(search.backend)}</dd>
<dt>${B.provisioned[lang]}</dt><dd>${state(search.provisioned)}</dd>
<dt>${B.answers[lang]}</dt><dd>${search.answers === null ? '—' : state(search.answers)}</dd>
<dt>${B.fed[lang]}</dt><dd>${state(search.projectionRunning)}</dd>
<dt>${B.pending[lang]}</dt><dd>${count(lang, search.pending)}</dd>
</dl>
<div class="scroll"><table class="list">
<caption>${B.projections[lang]}</caption>
<thead><tr><th scope="col">${B.projection[lang]}</th><th scope="col">${B.backlog[lang]}</th><th scope="col">${B.oldest[lang]}</th><th scope="col">${B.failingRows[lang]}</th><th scope="col">${B.lastApplied[lang]}</th><th scope="col">${B.lastError[lang]}</th></tr></thead>
<tbody>${projections.map(
        (p) =>
          html`<tr><td>${readable(p.projection)}</td><td>${count(lang, p.backlog)}</td><td>${count(lang, Math.round(p.oldestAgeMs / 1000))} s</td><td>${count(lang, p.failing)}</td><td>${p.lastAppliedAt === null ? '—' : timeView(lang, new Date(p.lastAppliedAt))}</td><td>${p.lastError === null ? '—' : readable(p.lastError)}</td></tr>`,
      )}</tbody>
</table></div>`,
    },
  };
}
