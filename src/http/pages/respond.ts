import type { FastifyReply, FastifyRequest } from 'fastify';
import { oauthError } from '../../auth/oauth-error.ts';
import { bodyText } from '../utf8.ts';

/**
 * Sent with every OAuth response: no framing (clickjacking), no inline script, nothing cached.
 * `same-origin`, not `no-referrer`: with no-referrer browsers send `Origin: null` on form posts,
 * which the Origin check below would refuse; other sites still never see our URLs.
 */
export function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', "frame-ancestors 'none'; default-src 'self'")
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('cache-control', 'no-store');
}

export function sendPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page);
}

/**
 * Reads an `application/x-www-form-urlencoded` body (the scope keeps bodies as bytes; they must
 * be UTF-8). A parameter sent twice is refused, as RFC 6749 §3.1 asks.
 */
export function parseForm(request: FastifyRequest): URLSearchParams {
  if (!/^application\/x-www-form-urlencoded\s*(?:;|$)/i.test(request.headers['content-type'] ?? '')) {
    throw oauthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  const text = bodyText(request.body);
  if ('problem' in text) throw oauthError('invalid_request', text.problem);
  const form = new URLSearchParams(text.text);
  const seen = new Set<string>();
  for (const key of form.keys()) {
    if (seen.has(key)) throw oauthError('invalid_request', `the parameter ${key} is repeated`);
    seen.add(key);
  }
  return form;
}

/** A browser form post must come from this gateway's own pages (Origin, when the browser sends it). */
export function fromOwnPage(request: FastifyRequest, publicUrl: string): boolean {
  const origin = request.headers.origin;
  return origin === undefined || origin === new URL(publicUrl).origin;
}
