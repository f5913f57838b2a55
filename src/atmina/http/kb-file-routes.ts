import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticateBearer } from '../../auth/bearer.ts';
import { resourceUrl } from '../../auth/resources.ts';
import type { Config } from '../../config.ts';
import { hasScopes } from '../../kernel/access/caller.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import { AuditTrail } from '../../kernel/audit/trail.ts';
import { isKgwError } from '../../kernel/errors.ts';
import { openDownload, readOriginal, readThumbnail } from '../kb/download-links.ts';
import type { Services } from '../../kernel/services.ts';
import type { Endpoint } from '../../mcp/registry.ts';
import { httpStatus } from '../../http/status.ts';

function fail(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error: { code, message } });
}

/**
 * GET /atmina/files/<link>: the original bytes of a Knowledge-Base Asset, for the principal a
 * read_file link was made for (src/atmina/kb/download-links.ts). The request carries that
 * principal's bearer token, as an MCP call does (an OAuth token of any endpoint that serves
 * the Atmina tools), with context.read; access is checked again as read_file checks it. The
 * bytes are streamed as an attachment, never rendered in the gateway's origin.
 *
 * GET /atmina/renditions/<link>: the thumbnail an asset block's rendition_url names, with the
 * same token and access checks; a WebP image the gateway encoded itself, so it is served
 * inline, cacheable by the reader's own client until the link expires.
 */
export function registerKbFileRoutes(app: FastifyInstance, config: Config, services: Services, endpoints: readonly Endpoint[]): void {
  const resources = endpoints.filter((endpoint) => endpoint.dialects.includes('atmina')).map((endpoint) => resourceUrl(config, endpoint));
  async function callerOf(header: string | undefined): Promise<Caller | undefined> {
    for (const resource of resources) {
      const auth = await authenticateBearer(services.tokens, header, resource);
      if ('caller' in auth) return auth.caller;
      if (auth.failure === 'missing') return undefined;
    }
    return undefined;
  }
  /**
   * Authenticates the request and answers what `serve` makes of the link, or the refusal: the
   * same checks, audit and error answers for every kind of link.
   */
  async function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    tool: string,
    serve: (caller: Caller, link: string, audit: AuditTrail) => Promise<FastifyReply>,
  ): Promise<FastifyReply> {
    const link = (request.params as { '*'?: string })['*'] ?? '';
    const caller = await callerOf(request.headers.authorization);
    if (caller === undefined) return fail(reply.header('www-authenticate', 'Bearer'), 401, 'unauthenticated', 'a valid bearer token is required');
    if (!hasScopes(caller, ['context.read'])) return fail(reply, 403, 'permission_denied', 'downloading files needs the context.read scope');
    const audit = AuditTrail.forTool(services.audit, caller, { name: tool, dialect: 'atmina' }, request.id);
    try {
      return await serve(caller, link, audit);
    } catch (error) {
      if (isKgwError(error)) {
        await audit.finish({ ok: false, errorCode: error.code });
        const status = httpStatus(error.code);
        if (status !== undefined) return fail(reply, status, error.code, error.message);
      }
      request.log.error({ err: error }, 'download failed');
      return fail(reply, 500, 'internal', 'download failed');
    }
  }

  // Wildcards, not parameters: links are longer than Fastify's 100-character parameters.
  app.get('/atmina/files/*', (request, reply) =>
    answer(request, reply, 'download_file', async (caller, link, audit) => {
      const original = await readOriginal(services, caller, await openDownload(services.db, link), audit);
      audit.readAs('kb.file.download');
      await audit.finish({ ok: true });
      const name = original.path.slice(original.path.lastIndexOf('/') + 1);
      return reply
        .code(200)
        .header('content-type', original.mediaType)
        .header('content-length', String(original.sizeBytes))
        .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(name)}`)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, no-store')
        .header('etag', `"${original.sha256}"`)
        .send(original.body);
    }),
  );

  app.get('/atmina/renditions/*', (request, reply) =>
    answer(request, reply, 'download_thumbnail', async (caller, link, audit) => {
      const target = await openDownload(services.db, link);
      const made = await readThumbnail(services, caller, target, audit);
      audit.readAs('kb.file.thumbnail');
      await audit.finish({ ok: true });
      // The link's remaining life: a client showing the image again within it need not ask again.
      const maxAge = Math.max(0, Math.floor((target.expiresAt.getTime() - Date.now()) / 1000));
      return reply
        .code(200)
        .header('content-type', made.mimeType)
        .header('content-length', String(made.data.length))
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', `private, max-age=${maxAge}`)
        .header('etag', `"thumbnail-${made.sha256}"`)
        .send(made.data);
    }),
  );
}
