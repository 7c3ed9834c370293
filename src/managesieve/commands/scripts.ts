import { checkScript, SieveStoreError, type SieveRefusal } from '../../sieve-store/store.js';
import type { CommandSpec, Session } from '../session.js';
import { SieveNo } from '../session.js';
import { sieveString } from '../wire.js';

/** The response code of each store refusal (RFC 5804 section 1.3). */
const CODES: Record<SieveRefusal, string | undefined> = {
  nonexistent: 'NONEXISTENT',
  exists: 'ALREADYEXISTS',
  'max-scripts': 'QUOTA/MAXSCRIPTS',
  'max-size': 'QUOTA/MAXSIZE',
  active: 'ACTIVE',
  parse: undefined,
  'bad-name': undefined,
};

/** Runs a store operation; a refusal becomes NO with its response code. */
async function storing(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (!(err instanceof SieveStoreError)) throw err;
    // A parse error's message names its line and column: "line 3, column 7: ...".
    throw new SieveNo(err.message, CODES[err.code] ?? (err.code === 'parse' || err.code === 'bad-name' ? '' : undefined));
  }
}

const box = (s: Session) => s.login!.mailboxId;

/** The script commands (RFC 5804 sections 2.5-2.12). */
export const scriptCommands: Record<string, CommandSpec> = {
  HAVESPACE: {
    states: ['auth'],
    async run(s, args) {
      const name = args.string('script name');
      const size = args.number('size');
      args.end();
      await storing(() => s.deps.scripts.haveSpace(box(s), name, size));
      s.ok('Putscript would succeed');
    },
  },
  PUTSCRIPT: {
    states: ['auth'],
    async run(s, args) {
      const name = args.string('script name');
      const text = args.string('script');
      args.end();
      await storing(() => s.deps.scripts.put(box(s), name, text));
      s.ok('Putscript completed');
    },
  },
  CHECKSCRIPT: {
    states: ['auth'],
    async run(s, args) {
      const text = args.string('script');
      args.end();
      await storing(async () => { checkScript(text); });
      s.ok('Script is valid');
    },
  },
  LISTSCRIPTS: {
    states: ['auth'],
    async run(s, args) {
      args.end();
      const list = await s.deps.scripts.list(box(s));
      s.send(list.map((x) => `${sieveString(x.name)}${x.active ? ' ACTIVE' : ''}\r\n`).join(''));
      s.ok('Listscripts completed');
    },
  },
  SETACTIVE: {
    states: ['auth'],
    async run(s, args) {
      const name = args.string('script name');
      args.end();
      await storing(() => s.deps.scripts.activate(box(s), name === '' ? null : name));
      s.ok(name === '' ? 'No script is active' : 'Setactive completed');
    },
  },
  GETSCRIPT: {
    states: ['auth'],
    async run(s, args) {
      const name = args.string('script name');
      args.end();
      const script = await s.deps.scripts.get(box(s), name);
      if (!script) throw new SieveNo('There is no script by that name', 'NONEXISTENT');
      s.send(`{${Buffer.byteLength(script.script, 'utf8')}}\r\n${script.script}\r\n`);
      s.ok('Getscript completed');
    },
  },
  DELETESCRIPT: {
    states: ['auth'],
    async run(s, args) {
      const name = args.string('script name');
      args.end();
      await storing(() => s.deps.scripts.remove(box(s), name, true));
      s.ok('Deletescript completed');
    },
  },
  RENAMESCRIPT: {
    states: ['auth'],
    async run(s, args) {
      const from = args.string('old script name');
      const to = args.string('new script name');
      args.end();
      await storing(() => s.deps.scripts.rename(box(s), from, to));
      s.ok('Renamescript completed');
    },
  },
};
