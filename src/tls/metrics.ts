import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { CertificateSource } from './index.js';
import { leafCertificate } from './pair.js';

/**
 * mailstead_tls_certificate_expiry_seconds{source}: seconds until the certificate in force expires,
 * read at each scrape, labelled by where it came from (files, acme, self-signed), so an alert can
 * fire on a renewal that keeps failing long before clients see an expired certificate.
 */
export function registerCertificateMetrics(registry: Registry, tls: CertificateSource, clock: Clock): void {
  new Gauge({
    name: 'mailstead_tls_certificate_expiry_seconds',
    help: 'Seconds until the TLS certificate in force expires, by source (files, acme, self-signed)',
    labelNames: ['source'] as const,
    registers: [registry],
    collect() {
      const now = tls.current();
      this.reset(); // only the source in force is reported
      this.set({ source: now.source }, Math.round((new Date(leafCertificate(now.cert).validTo).getTime() - clock.now()) / 1000));
    },
  });
}
