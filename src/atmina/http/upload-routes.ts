import type { FastifyInstance, FastifyReply } from 'fastify';
import type { UploadReceiver } from '../../../connectors/blob/disk.ts';
import type { EventLimiter } from '../../auth/rate-limit.ts';
import { isKgwError } from '../../kernel/errors.ts';
import type { StatusOverride } from '../../http/status.ts';
import { httpStatus } from '../../http/status.ts';

/**
 * The upload route answers as S3 answers a presigned PUT, so clients written for S3 read it alike;
 * where that differs from the registry (HTTP_STATUS):
 * - content_integrity (bytes that do not match their SHA-256) is 400, as S3's BadDigest, not 422;
 * - unavailable (the upload secret is unreadable) is the gateway's own failure, a plain 500 as
 *   S3's InternalError, not 503 with the reason;
 * - unauthenticated and rate_limited: the URL is the credential, and the rate is limited here,
 *   before the receiver, so it throws neither; one would be a fault of the gateway, a plain 500 too.
 * The other codes keep the registry's status: 400 for headers that differ from the ticket, 403
 * for a bad or expired URL, 404, 409 for a URL already used, 413.
 */
const S3_STATUS: StatusOverride = { content_integrity: 400, unavailable: null, unauthenticated: null, rate_limited: null };

function fail(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error: { code, message } });
}

/**
 * PUT /uploads/<ticket>: the gateway's own presigned URLs for the disk blob store. The ticket
 * is signed and carries the key, size, type and expiry; the body is streamed into the store,
 * which checks Content-Length, Content-Type and x-amz-checksum-sha256 against the ticket and
 * the bytes against the SHA-256 while writing. No bearer token: the URL is the credential.
 */
export function registerUploadRoutes(app: FastifyInstance, uploads: UploadReceiver, puts: EventLimiter): void {
  // `puts` counts per client address (the URL names no principal): a PUT over the rate is
  // refused before its body is read, 429 with Retry-After as S3's SlowDown is a 503.
  void app.register((scope, _options, done) => {
    // The body stays a stream: the store reads request.raw itself, with no size limit but the ticket's.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, finish) => finish(null));
    // A wildcard, not a parameter: tickets are longer than Fastify's 100-character parameters.
    scope.put('/uploads/*', async (request, reply) => {
      const wait = await puts.take(request.ip);
      if (wait !== undefined) {
        reply.header('connection', 'close').header('retry-after', String(wait));
        return fail(reply, 429, 'rate_limited', `too many uploads in a short time; retry in ${wait} s`);
      }
      const ticket = (request.params as { '*'?: string })['*'] ?? '';
      const header = (name: string): string | undefined => {
        const value = request.headers[name];
        return typeof value === 'string' ? value : undefined;
      };
      try {
        const blob = await uploads.receiveUpload(ticket, {
          contentLength: header('content-length'),
          contentType: header('content-type'),
          checksumSha256: header('x-amz-checksum-sha256'),
          body: request.raw,
        });
        return await reply
          .code(200)
          .header('x-amz-checksum-sha256', Buffer.from(blob.sha256, 'hex').toString('base64'))
          .header('etag', `"${blob.sha256}"`)
          .send();
      } catch (error) {
        // Answered here, not by a scope error handler: only this handler knows the body may be unread.
        if (!request.raw.complete) reply.header('connection', 'close');
        if (isKgwError(error)) {
          const status = httpStatus(error.code, S3_STATUS);
          if (status !== undefined) return fail(reply, status, error.code, error.message);
        }
        request.log.error({ err: error }, 'upload failed');
        return fail(reply, 500, 'internal', 'upload failed');
      }
    });
    done();
  });
}
