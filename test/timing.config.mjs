// The timing lane of `npm test` (test/timing/README.md): wall-clock bounds, run serially after the
// main lanes. The SQLite lane of package.json leaves test/timing/ out.
// Files that need a PostgreSQL cluster (several nodes on one database) are left out where the
// PostgreSQL lane is (MAILSTEAD_TEST_POSTGRES=0, the Node 22 line of .ci/run).
import { readFileSync } from 'node:fs';

const { ava } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const postgres = process.env.MAILSTEAD_TEST_POSTGRES !== '0';

export default {
  ...ava,
  files: ['test/timing/**/*.test.ts', ...(postgres ? [] : ['!test/timing/two-nodes-*.test.ts'])],
  serial: true,
  concurrency: 1,
};
