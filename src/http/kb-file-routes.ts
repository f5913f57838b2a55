import type { FastifyInstance, FastifyReply } from 'fastify';
import { authenticateBearer } from '../auth/bearer.ts';
import { resourceUrl } from '../auth/resources.ts';
import type { Config } from '../config.ts';
import { hasScopes } from '../core/access/caller.ts';
import type { Caller } from '../core/access/caller.ts';
import { AuditTrail } from '../core/audit/trail.ts';
import { isKgwError } from '../core/errors.ts';
import { openDownload, readOriginal } from '../core/kb/download-links.ts';
import type { Services } from '../core/services.ts';
import type { Endpoint } from '../mcp/registry.ts';
import { httpStatus } from './status.ts';

function fail(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error: { code, message } });
}

/**
 * GET /atmina/files/<link>: the original bytes of a Knowledge-Base Asset, for the principal a
 * read_file link was made for (core/kb/download-links.ts). The request carries that
 * principal's bearer token, as an MCP call does (an OAuth token of any endpoint that serves
 * the Atmina tools), with context.read; access is checked again as read_file checks it. The
 * bytes are streamed as an attachment, never rendered in the gateway's origin.
 */
export function registerKbFileRoutes(app: FastifyInstance, config: Config, services: Services, endpoints: readonly Endpoint[]): void {
  const resources = endpoints.filter((endpoint) => endpoint.dialects.includes('atmina')).map((endpoint) => resourceUrl(config, endpoint));
  async function callerOf(header: string | undefined): Promise<Caller | undefined> {
    for (const resource of resources) {
      const auth = await authenticateBearer(services.db, header, resource);
      if ('caller' in auth) return auth.caller;
      if (auth.failure === 'missing') return undefined;
    }
    return undefined;
  }
  // A wildcard, not a parameter: links are longer than Fastify's 100-character parameters.
  app.get('/atmina/files/*', async (request, reply) => {
    const link = (request.params as { '*'?: string })['*'] ?? '';
    const caller = await callerOf(request.headers.authorization);
    if (caller === undefined) return fail(reply.header('www-authenticate', 'Bearer'), 401, 'unauthenticated', 'a valid bearer token is required');
    if (!hasScopes(caller, ['context.read'])) return fail(reply, 403, 'permission_denied', 'downloading files needs the context.read scope');
    const audit = AuditTrail.forTool(services.audit, caller, { name: 'download_file', dialect: 'atmina' }, request.id);
    try {
      const target = await openDownload(services.db, link);
      const original = await readOriginal(services, caller, target, audit);
      audit.readAs('kb.file.download');
      await audit.finish({ ok: true });
      const name = original.path.slice(original.path.lastIndexOf('/') + 1);
      return await reply
        .code(200)
        .header('content-type', original.mediaType)
        .header('content-length', String(original.sizeBytes))
        .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(name)}`)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, no-store')
        .header('etag', `"${original.sha256}"`)
        .send(original.body);
    } catch (error) {
      if (isKgwError(error)) {
        await audit.finish({ ok: false, errorCode: error.code });
        const status = httpStatus(error.code);
        if (status !== undefined) return fail(reply, status, error.code, error.message);
      }
      request.log.error({ err: error }, 'download failed');
      return fail(reply, 500, 'internal', 'download failed');
    }
  });
}
