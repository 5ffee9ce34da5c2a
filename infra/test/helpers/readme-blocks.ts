/**
 * The README's shell blocks as the docs test (infra/test/readme.test.ts) runs them. The
 * convention, written down in docs/readme-test.md:
 *
 * - every ```sh or ```bash block runs, in order, in one bash session (variables carry over);
 * - a command is the shortest run of lines from a non-comment line that bash parses whole
 *   (continuation lines, quotes and here-documents included);
 * - `# → TEXT`, on the lines after a command or at the end of its last line, is output the
 *   command must print: TEXT appears in its output, `…` standing for any text;
 *   `# → exit N` is its exit status (0 unless said);
 * - `<!-- docs-test: skip (why) -->` right before a block skips it; `<!-- docs-test: ACTION
 *   ARGS -->` right before a block is a browser step the test does first (readme.test.ts
 *   lists them).
 */
import { spawnSync } from 'node:child_process';

export interface Command {
  /** 1-based line in README.md of its first line. */
  line: number;
  text: string;
  /** `# →` texts it must print. */
  expects: string[];
  /** Its exit status: 0 unless an `# → exit N` says otherwise. */
  exit: number;
}

export interface Block {
  line: number;
  directive: string | undefined;
  commands: Command[];
}

const FENCE = /^```(sh|bash)\s*$/;
const DIRECTIVE = /^<!--\s*docs-test:\s*(.*?)\s*-->\s*$/;
const EXPECT_LINE = /^\s*#\s*→\s?(.*)$/;
const EXPECT_TRAILING = /\s#\s*→\s?(.*)$/;
const HEREDOC = /<<-?\s*(['"]?)([A-Za-z_]\w*)\1/g;

/** True when bash parses `text` as complete commands. */
function complete(text: string): boolean {
  for (const [, , word] of text.matchAll(HEREDOC)) {
    if (!new RegExp(`^\\s*${word}\\s*$`, 'm').test(text.slice(text.indexOf(word!) + word!.length)))
      return false;
  }
  if (/\\$/.test(text)) return false;
  return spawnSync('bash', ['-n'], { input: `${text}\n` }).status === 0;
}

function splitCommands(lines: string[], firstLine: number): Command[] {
  const commands: Command[] = [];
  for (let i = 0; i < lines.length;) {
    const line = lines[i]!;
    const expected = EXPECT_LINE.exec(line);
    if (expected || /^\s*(#|$)/.test(line)) {
      const last = commands.at(-1);
      if (expected && last) addExpect(last, expected[1]!);
      i++;
      continue;
    }
    let end = i + 1;
    while (end < lines.length && !complete(lines.slice(i, end).join('\n'))) end++;
    const text = lines.slice(i, end).join('\n');
    const command: Command = { line: firstLine + i, text, expects: [], exit: 0 };
    const trailing = EXPECT_TRAILING.exec(lines[end - 1]!);
    if (trailing) addExpect(command, trailing[1]!);
    commands.push(command);
    i = end;
  }
  return commands;
}

function addExpect(command: Command, text: string) {
  const exit = /^exit (\d+)$/.exec(text.trim());
  if (exit) command.exit = Number(exit[1]);
  else command.expects.push(text.trim());
}

/** The shell blocks of `markdown`, each with the directive right before it. */
export function parseBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!FENCE.test(lines[i]!)) {
      if (/^\s*```/.test(lines[i]!)) {
        // Another language's block: skip to its end, so its lines are not read as fences.
        for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++);
      }
      continue;
    }
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const directive = before >= 0 ? DIRECTIVE.exec(lines[before]!)?.[1] : undefined;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    blocks.push({
      line: start + 1,
      directive,
      commands: splitCommands(lines.slice(start, end), start + 1),
    });
    i = end;
  }
  return blocks;
}

/** True when `output` contains `expected`, each `…` in it standing for any text. */
export function matchesExpectation(expected: string, output: string): boolean {
  const pattern = expected
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*?');
  return new RegExp(pattern).test(output);
}
