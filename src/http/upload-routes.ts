import type { FastifyInstance, FastifyReply } from 'fastify';
import type { UploadReceiver } from '../../connectors/blob/disk.ts';
import type { ErrorCode } from '../core/errors.ts';
import { isKgwError } from '../core/errors.ts';

// Status codes as S3 answers a presigned PUT: 403 for a bad or expired URL, 400 for bad bytes.
const STATUS: Readonly<Partial<Record<ErrorCode, number>>> = {
  validation: 400,
  content_integrity: 400,
  permission_denied: 403,
  conflict: 409,
  payload_too_large: 413,
  not_found: 404,
};

function fail(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error: { code, message } });
}

/**
 * PUT /uploads/<ticket>: the gateway's own presigned URLs for the disk blob store. The ticket
 * is signed and carries the key, size, type and expiry; the body is streamed into the store,
 * which checks Content-Length, Content-Type and x-amz-checksum-sha256 against the ticket and
 * the bytes against the SHA-256 while writing. No bearer token: the URL is the credential.
 */
export function registerUploadRoutes(app: FastifyInstance, uploads: UploadReceiver): void {
  void app.register((scope, _options, done) => {
    // The body stays a stream: the store reads request.raw itself, with no size limit but the ticket's.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, finish) => finish(null));
    // A wildcard, not a parameter: tickets are longer than Fastify's 100-character parameters.
    scope.put('/uploads/*', async (request, reply) => {
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
        if (!request.raw.complete) reply.header('connection', 'close');
        if (isKgwError(error)) {
          const status = STATUS[error.code];
          if (status !== undefined) return fail(reply, status, error.code, error.message);
        }
        request.log.error({ err: error }, 'upload failed');
        return fail(reply, 500, 'internal', 'upload failed');
      }
    });
    done();
  });
}
