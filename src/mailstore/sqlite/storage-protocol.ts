import type { MarkerCell } from '../markers.js';
import type { QueuedHint } from '../../webhooks/events.js';
import type { AcceptJob, AcceptOutcome, StoreInput, StoreResult } from '../commits.js';
import type { MoveInput, MoveResult } from '../journal-move.js';
import type { QueueJob } from '../submissions.js';
import type { SpamFilterMode } from '../../spam/settings.js';
import type { FailureNote } from '../set-aside.js';

/** What the storage thread is started with. */
export interface StorageThreadData {
  dataDir: string;
  /** The update-marker cell shared with the server's connection (already loaded). */
  markerCell: MarkerCell;
  /** MAILSTEAD_SPAM_FILTER: the classify step of stored batches runs here. */
  spamFilter?: SpamFilterMode;
}

/** A request to the storage thread; `now` is the server's clock, so an injected clock holds in the thread too. */
export type StorageRequest =
  | { id: number; op: 'accept'; now: number; jobs: AcceptJob[] }
  | { id: number; op: 'store'; now: number; input: StoreInput }
  | { id: number; op: 'move'; now: number; input: MoveInput }
  | { id: number; op: 'submissions'; now: number; jobs: QueueJob[] }
  /** A failed try at one queued message, counted in a transaction of its own (set-aside.ts). */
  | { id: number; op: 'note'; now: number; inboundId: number; reason: string }
  | { id: number; op: 'close'; now: number };

/** The thread's answer to a request. */
export type StorageReply =
  | { id: number; ok: true; outcomes?: AcceptOutcome[]; stored?: StoreResult; moved?: MoveResult; refs?: Array<number | null>; noted?: FailureNote; hints: QueuedHint[] }
  | { id: number; ok: false; error: string };
