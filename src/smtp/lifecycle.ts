import type { AddressInfo } from 'node:net';
import type { SMTPServer } from 'smtp-server';

/** Listens on `port` (0 picks one) and resolves with the real port; a bind error rejects. */
export function listenSmtp(server: SMTPServer, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve((server.server.address() as AddressInfo).port);
    });
  });
}

/**
 * The graceful stop both SMTP faces share: stop accepting, let messages being committed finish
 * (`drained`), then tell every open SMTP connection 421 and give it a second to go.
 */
export async function drainSmtp(server: SMTPServer, drained: () => Promise<void>): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  await drained();
  for (const c of [...(server as unknown as { connections: Set<{ send(code: number, text: string): void }> }).connections]) c.send(421, '4.3.2 service shutting down');
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
}
