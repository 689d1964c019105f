import { createSocket } from 'node:dgram';

/**
 * The local stand-in for the X-Ray daemon that Lambda runs beside a function with active tracing:
 * a UDP listener that keeps the segment documents the functions' tracers send, so traces can be
 * read locally (X-Ray: "Sending segment documents to the X-Ray daemon": a JSON header line, a
 * newline, then the segment).
 */
export interface XRayDaemon {
  address: string;
  /** Every segment and subsegment document received, oldest first. */
  segments: Array<Record<string, any>>;
  close(): Promise<void>;
}

export async function startXRayDaemon(): Promise<XRayDaemon> {
  const socket = createSocket('udp4');
  const segments: Array<Record<string, any>> = [];
  socket.on('message', (message) => {
    const text = message.toString('utf8');
    const body = text.slice(text.indexOf('\n') + 1);
    try { segments.push(JSON.parse(body) as Record<string, any>); } catch { /* not a segment document */ }
    if (segments.length > 10_000) segments.splice(0, segments.length - 10_000);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  return {
    address: `127.0.0.1:${port}`,
    segments,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
