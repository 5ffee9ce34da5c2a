import { expect, test } from '@jest/globals';
import { matchesExpectation, parseBlocks } from './helpers/readme-blocks.js';

// The convention the README docs test reads (docs/readme-test.md).

const README = [
  '# Title',
  '',
  '```sh',
  'curl -s $API/a   # → {"status":"ok"}',
  'curl -s -X POST $API/b \\',
  '  -d \'{"x":1}\'',
  '# → HTTP/1.1 201',
  '# a comment for the reader',
  '# → "id":"…"',
  "cat > f.mjs <<'JS'",
  'console.log("# → not an expectation")',
  'JS',
  'X=$(node -e "',
  'console.log(1)")',
  'curl -sN --max-time 1 $API/stream   # → exit 28',
  '```',
  '',
  '```js',
  '```sh inside another block is not a block',
  '```',
  '',
  '<!-- docs-test: skip (needs Docker) -->',
  '',
  '```bash',
  'docker compose up',
  '```',
].join('\n');

test('splits blocks into whole commands with their expected output and exit status', () => {
  const [first, second, ...rest] = parseBlocks(README);
  expect(rest).toEqual([]);
  expect(first!.line).toBe(4);
  expect(first!.directive).toBeUndefined();
  expect(first!.commands.map((c) => [c.line, c.expects, c.exit])).toEqual([
    [4, ['{"status":"ok"}'], 0],
    [5, ['HTTP/1.1 201', '"id":"…"'], 0],
    [10, [], 0],
    [13, [], 0],
    [15, [], 28],
  ]);
  expect(first!.commands[1]!.text).toBe('curl -s -X POST $API/b \\\n  -d \'{"x":1}\'');
  expect(first!.commands[2]!.text.split('\n')).toHaveLength(3);
  expect(second!.directive).toBe('skip (needs Docker)');
  expect(second!.commands.map((c) => c.text)).toEqual(['docker compose up']);
});

test('an expectation matches as a substring, … standing for any text', () => {
  expect(matchesExpectation('401 … 429', '401 401 401 429 ')).toBe(true);
  expect(matchesExpectation('{"a":"…","b":2}', 'x {"a":"some\nthing","b":2} y')).toBe(true);
  expect(matchesExpectation('"a":1', '{"a":1,"b":2}')).toBe(true);
  expect(matchesExpectation('{"a":1}', '{"a":12}')).toBe(false);
  expect(matchesExpectation('{"b":2}', '{"a":1}')).toBe(false);
  expect(matchesExpectation('a.b(c)', 'aXb(c)')).toBe(false);
});
