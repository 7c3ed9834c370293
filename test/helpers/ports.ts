import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The kernel's ephemeral range: every `listen(0)` and every outgoing connection of the whole test
 * run draws from it, so a port picked there and bound a moment later (a server that must know its
 * port before it starts, or a restart on the same port) can be taken in between by another test
 * process. Ports below it are handed out only by name.
 */
function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && low > 12_000) return low;
  } catch { /* not Linux: fall through */ }
  return 32_768;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * A loopback port for a process that needs the number in its configuration, or a server restarted
 * on the port it had: outside the ephemeral range, chosen at random so concurrent test processes
 * rarely meet, and free at the time of the call.
 */
export async function fixedPort(): Promise<number> {
  const low = 10_000;
  const high = ephemeralLow() - 1;
  for (let tries = 0; tries < 200; tries++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port between ${low} and ${high}`);
}
