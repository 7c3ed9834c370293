import type { SpamTrainer } from '../training.js';
import type { RspamdTrainer } from './rspamd.js';

/**
 * The rspamd controller as one of the filter's trainers (MAILSTEAD_SPAM_FILTER=rspamd): each
 * message a user judged is sent as stored, with its bytes read by `rawBytes`, to /learnspam or
 * /learnham. A failure stops the event and is logged by the training service, never the user's.
 */
export function rspamdSpamTrainer(trainer: RspamdTrainer, rawBytes: (tenantId: number, emailId: number) => Promise<Buffer>): SpamTrainer {
  return {
    name: 'rspamd',
    async learn(event) {
      for (const id of event.emailIds) await trainer.train(await rawBytes(event.tenantId, id), event.cls);
    },
  };
}
