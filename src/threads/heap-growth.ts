/**
 * The old-generation limit (`resourceLimits.maxOldGenerationSizeMb`) of the threads on the ingest
 * path, the parser and the storage thread.
 *
 * V8 derives its old-generation growing factor from that limit: 4 from 2 GB up, but below it
 * 1.3 + 0.7 x (limit - 256 MB) / (2,048 - 256 MB) on 64-bit (1.35 for the 384 MB the parser had).
 * With ~15 MB of modules live, the parser thread then ran a full mark-compact every few MB of
 * promoted objects: 106 in one SMTP benchmark run, ~30 % more CPU per parsed message than without
 * the limit (docs/PERFORMANCE.md, "Allocator, GC and thread settings"). Just under 2 GB the factor
 * is ~2: 1.3 full GCs per 1,000 messages instead of 3.2, an old generation at most about twice its
 * live size between them.
 * Setting the factor for the whole process instead (`--heap-growing-percent`) also changed the main
 * thread's, and its first-page read latency got worse.
 *
 * The limit still ends a thread that runs away (its requests fail and are retried, the server
 * goes on); what a parse can use is bounded well below it by the 25 MB SIZE limit and mailparser's
 * node limit, what a storage batch can use by BATCH_BYTES.
 */
export const INGEST_THREAD_OLD_MB = 2000;
