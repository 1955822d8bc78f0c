import { isSafeRelativePath } from './source.ts';

/**
 * Static signals that a skill asks an agent to run code or widen its powers. They are read
 * from the text only — the namespace never executes anything — and are meant for the human or
 * agent deciding whether to install the skill.
 */
export interface SafetyWarning {
  code:
    | 'SCRIPTS_PRESENT'
    | 'EXECUTABLE_FILES'
    | 'ALLOWED_TOOLS'
    | 'SHELL_SNIPPETS'
    | 'PIPE_TO_SHELL'
    | 'DYNAMIC_COMMAND'
    | 'SYMLINKS'
    | 'UNSAFE_PATHS';
  message: string;
  /** Files or snippets the warning is about (a few, for orientation). */
  examples: string[];
}

const SCRIPT_EXTENSIONS =
  /\.(sh|bash|zsh|fish|ps1|psm1|bat|cmd|py|js|mjs|cjs|ts|rb|pl|php|lua|go|rs|exe|dll|so|dylib|bin|jar)$/i;
/*
 * The three body scans below are written out by hand: as one global regex each, a long run
 * of whitespace lines, of `curl` words without a pipe, or of "!`" without a closing backtick
 * made the engine rescan the same run from every start, quadratic in the body (a 1 MiB
 * SKILL.md held the event loop for minutes). Each finds exactly what these regexes find,
 * with every character looked at a bounded number of times:
 *   shell fences     /^\s*(```|~~~)\s*(bash|sh|…)\b/gim
 *   pipe to shell    /\b(curl|wget|iwr|invoke-webrequest)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da|fi)?sh\b|\|\s*iex\b/gi
 *   dynamic command  /!`[^`\n]+`/g
 */
const FENCE_AT = /(```|~~~)\s*(bash|sh|shell|zsh|console|powershell|pwsh|ps1|cmd|bat|fish)\b/iy;
const DOWNLOADER = /\b(curl|wget|iwr|invoke-webrequest)\b/gi;
const SHELL_AFTER_PIPE = /\s*(sudo\s+)?(ba|z|da|fi)?sh\b/iy;
const IEX_AFTER_PIPE = /\s*iex\b/iy;
const SPACES = /\s*/y;
/** What ends a line for `^` in a multiline regex. */
const LINE_END = /[\n\r\u2028\u2029]/g;

/** End of the sticky `pattern` matched at `at`, or -1. */
function stickyEnd(pattern: RegExp, text: string, at: number): number {
  pattern.lastIndex = at;
  return pattern.test(text) ? pattern.lastIndex : -1;
}

/** Code fences of a shell language, each from the line start its leading whitespace began at. */
export function shellFences(body: string): string[] {
  const found: string[] = [];
  for (let lineStart = 0; ; ) {
    SPACES.lastIndex = lineStart;
    SPACES.test(body);
    const first = SPACES.lastIndex;
    const end = stickyEnd(FENCE_AT, body, first);
    if (end !== -1) found.push(body.slice(lineStart, end));
    // Line starts inside the whitespace just crossed reach the same character: none can match.
    LINE_END.lastIndex = end === -1 ? first : end;
    if (!LINE_END.test(body)) return found;
    lineStart = LINE_END.lastIndex;
  }
}

/** Index of the first "\n" or "|" at or after `from`, or the body's length. */
function lineOrPipe(body: string, from: number): number {
  let at = from;
  while (at < body.length && body[at] !== '\n' && body[at] !== '|') at++;
  return at;
}

/** A download piped into a shell (or into iex), as the regex above finds them. */
export function pipesToShell(body: string): string[] {
  const candidates: Array<[number, number]> = [];
  // Every downloader word before the same "|" or line end shares that stop, and its verdict.
  let stop = -1;
  let stopEnd = -1;
  DOWNLOADER.lastIndex = 0;
  for (let word = DOWNLOADER.exec(body); word; word = DOWNLOADER.exec(body)) {
    const after = word.index + word[0].length;
    if (after > stop) {
      stop = lineOrPipe(body, after);
      stopEnd = body[stop] === '|' ? stickyEnd(SHELL_AFTER_PIPE, body, stop + 1) : -1;
    }
    if (stopEnd !== -1) candidates.push([word.index, stopEnd]);
  }
  for (let pipe = body.indexOf('|'); pipe !== -1; pipe = body.indexOf('|', pipe + 1)) {
    const end = stickyEnd(IEX_AFTER_PIPE, body, pipe + 1);
    if (end !== -1) candidates.push([pipe, end]);
  }
  // Leftmost first; a match hides the candidates that start inside it, as a global regex does.
  candidates.sort((a, b) => a[0] - b[0]);
  const found: string[] = [];
  let taken = 0;
  for (const [start, end] of candidates) {
    if (start < taken) continue;
    found.push(body.slice(start, end));
    taken = end;
  }
  return found;
}

/** Claude Code runs `!`command`` lines in a skill before the model sees them. */
export function dynamicCommands(body: string): string[] {
  const found: string[] = [];
  // The first backtick or line end after an opening; shared by openings before it.
  let stop = -1;
  for (let at = body.indexOf('!`'); at !== -1; ) {
    const open = at + 2;
    if (open > stop) {
      stop = open;
      while (stop < body.length && body[stop] !== '`' && body[stop] !== '\n') stop++;
    }
    if (body[stop] === '`' && stop > open) {
      found.push(body.slice(at, stop + 1));
      at = body.indexOf('!`', stop + 1);
    } else {
      at = body.indexOf('!`', at + 1);
    }
  }
  return found;
}

export interface FileForWarnings {
  path: string;
  /** Git file mode from the tree: 100755 marks an executable. */
  mode?: string;
}

function few(items: string[]): string[] {
  return items.slice(0, 5).map((item) => item.slice(0, 120));
}

export function safetyWarnings(
  body: string,
  allowedTools: string[],
  files: FileForWarnings[],
): SafetyWarning[] {
  const warnings: SafetyWarning[] = [];
  // A warning stands only when something was found; its examples are a few of what was.
  const warn = (code: SafetyWarning['code'], found: string[], message: string) => {
    if (found.length > 0) warnings.push({ code, message, examples: few(found) });
  };
  const scripts = files
    .filter((file) => file.path.split('/').includes('scripts') || SCRIPT_EXTENSIONS.test(file.path))
    .map((file) => file.path);
  warn(
    'SCRIPTS_PRESENT',
    scripts,
    `${scripts.length} file(s) are scripts or programs. Read them before letting an agent run them; this gateway never runs them.`,
  );
  const executables = files.filter((file) => file.mode === '100755').map((file) => file.path);
  warn('EXECUTABLE_FILES', executables, `${executables.length} file(s) are marked executable in git.`);
  const links = files.filter((file) => file.mode === '120000').map((file) => file.path);
  warn(
    'SYMLINKS',
    links,
    `${links.length} symbolic link(s): a checkout of the commit would make links that may point outside the folder. Their targets are not delivered as files.`,
  );
  const unsafe = files.filter((file) => !isSafeRelativePath(file.path)).map((file) => file.path);
  warn(
    'UNSAFE_PATHS',
    unsafe,
    `${unsafe.length} file name(s) contain "..", "\\", ":", control characters, a trailing dot or space, or a Windows device name, which would place them outside the folder or on a device on some systems; they are not delivered.`,
  );
  warn(
    'ALLOWED_TOOLS',
    allowedTools,
    `The skill asks for pre-approved tools (allowed-tools): ${allowedTools.join(' ').slice(0, 200)}. An agent honouring it runs these without asking.`,
  );
  const fences = shellFences(body).map((fence) => fence.trim());
  warn(
    'SHELL_SNIPPETS',
    fences,
    `The instructions contain ${fences.length} shell code block(s) an agent may be told to run.`,
  );
  warn(
    'PIPE_TO_SHELL',
    pipesToShell(body),
    'The instructions pipe a download straight into a shell: that runs code nobody has read.',
  );
  warn(
    'DYNAMIC_COMMAND',
    dynamicCommands(body),
    'The instructions contain !`command` lines, which some agents run before reading the skill.',
  );
  return warnings;
}
