/**
 * Concurrent-connection bookkeeping per client address, so one host cannot take every slot of
 * the listener (the global cap is smtp-server's maxClients).
 */
export function createConnectionLimits(perAddress: number) {
  const counts = new Map<string, number>();
  const admitted = new Set<string>();
  return {
    /** Admits session `id` from `address` unless that address already holds `perAddress` connections. */
    admit(id: string, address: string): boolean {
      const n = counts.get(address) ?? 0;
      if (n >= perAddress) return false;
      counts.set(address, n + 1);
      admitted.add(id);
      return true;
    },
    /** Releases the slot of an admitted session; a refused one holds none. */
    release(id: string, address: string): void {
      if (!admitted.delete(id)) return;
      const n = (counts.get(address) ?? 1) - 1;
      if (n <= 0) counts.delete(address);
      else counts.set(address, n);
    },
  };
}
