import { deserialize, serialize } from 'node:v8';
import type { StoredMessage } from './message.js';
import type { EncodedMessage } from './types.js';

export type { EncodedMessage };

/**
 * Encodes a parsed message (a StoredMessage) for its crossing from the parser to the storage
 * thread with V8's serialization, which copies strings as they are. JSON escaped every body on the way
 * (JSON.stringify and its UTF-8 encoding took ~14 µs for a 5 KB message, this ~6; decoding costs
 * the same either way; docs/PERFORMANCE.md, "Parser and storage threads"). Bytes, not a string:
 * they pass through the main thread outside its heap. Only ever between threads of one process,
 * never stored: the format is the running V8's.
 */
export const encodeMessage = (message: StoredMessage): EncodedMessage => serialize(message);

export const decodeMessage = (encoded: EncodedMessage): StoredMessage => deserialize(encoded) as StoredMessage;
