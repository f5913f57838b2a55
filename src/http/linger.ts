import type { FastifyInstance } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a connection the gateway closes may go on receiving what its client still sends
 * (README "Hardening"): at most `lingerMs` after the answer went out, then it is closed whatever
 * arrives. Apache's lingering close waits 2 s too; a client is done reading by then.
 */
export const LINGER_LIMITS = { lingerMs: 2_000 } as const;

const lingering = new WeakSet<Socket>();

/**
 * Closes in stages, as RFC 9112 §9.6 asks of a server that closes while its client may still be
 * sending: the answer and a FIN first, then what still arrives is read and dropped until the
 * client closes its side or `lingerMs` pass. The gateway refuses some requests before reading
 * their bodies (too large, too many bytes in flight, headers too long) and closes the
 * connection rather than read the rest. Closing a socket whose receive buffer still holds the
 * client's bytes makes the kernel answer with a reset, and a client still writing its body then
 * often sees ECONNRESET, not the 413 it was sent: the refusal looked like a network failure.
 */
function linger(socket: Socket, lingerMs: number): void {
  if (lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  if (socket.writable) socket.end();
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  socket.once('close', () => clearTimeout(timer));
  // Node's HTTP server reads on (it drops the rest of a request body it was not asked to read);
  // a socket read through 'data' is kept flowing so that its buffer never fills.
  socket.resume();
}

/**
 * Every connection of `app` closes by lingering: Node closes a connection after an answer that
 * ends it (`Connection: close`) through `socket.destroySoon()`, which otherwise destroys the
 * socket as soon as the answer is written. A request a client pipelined behind the one whose
 * answer closed the connection runs as it would have a moment earlier, as one whose client left
 * does; its answer is not sent.
 */
export function registerLingeringClose(app: FastifyInstance, limits: { readonly lingerMs: number } = LINGER_LIMITS): void {
  app.server.on('connection', (socket: Socket) => {
    socket.destroySoon = () => linger(socket, limits.lingerMs);
  });
}

/**
 * Fastify's `clientErrorHandler`: a request Node's parser refused (headers over 16 KiB, a
 * malformed request line, a request not sent within its time) gets Fastify's JSON answer, as
 * before, and then a lingering close instead of Fastify's immediate destroy. A parser that failed
 * keeps failing on whatever else arrives, so this runs again for the same socket: it answers once.
 */
export function clientErrorAnswer(error: Error & { code?: string }, socket: Socket, limits: { readonly lingerMs: number } = LINGER_LIMITS): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || lingering.has(socket)) return;
  const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const message = status === 408 ? 'Client Timeout' : status === 431 ? 'Exceeded maximum allowed HTTP header size' : 'Client Error';
  const body = JSON.stringify({ error: STATUS_CODES[status], message, statusCode: status });
  // As Node's own answer: never written into an answer already under way, whose client would read it as that answer's bytes.
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (socket.writable && !answering) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  linger(socket, limits.lingerMs);
}
