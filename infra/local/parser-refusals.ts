import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorResponse, REQUEST_ID_HEADER } from '#shared/http/responses';
import { ApiError, BadRequest } from '#shared/jsonapi/errors';

/**
 * Requests Node's HTTP parser refuses before any handler sees them (oversized headers, a malformed
 * request line, a request too slow to arrive) answered like every other answer of the local edge:
 * a JSON:API error with the contract's headers, not Node's bare status line. Deployed, CloudFront
 * or API Gateway refuse such requests with their own answers before anything of ours runs
 * (CloudFront's with its X-Amz-Cf-Id: `moreHeaders` gives the local front's).
 * https://nodejs.org/api/http.html#event-clienterror
 */
export function answerParserRefusals(server: Server, moreHeaders: () => Record<string, string> = () => ({})): void {
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    // The client is gone, or an answer already started on this connection: nothing can be said.
    const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (error.code === 'ECONNRESET' || !socket.writable || answering) {
      socket.destroy();
      return;
    }
    const { statusCode, headers, body } = errorResponse(refusalOf(error.code));
    const head = {
      ...headers,
      [REQUEST_ID_HEADER]: randomUUID(),
      ...moreHeaders(),
      'Content-Length': String(Buffer.byteLength(body)),
      Connection: 'close',
    };
    const lines = [
      `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}`,
      ...Object.entries(head).map(([name, value]) => `${name}: ${value}`),
    ];
    socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
  });
}

/** What Node answers each refusal with (its own status codes), as a contract error. */
function refusalOf(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW')
    return new ApiError(431, 'request header fields too large', 'the request headers are too large');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new ApiError(408, 'request timeout', 'the request did not arrive in time');
  return new BadRequest('the request is not valid HTTP');
}
