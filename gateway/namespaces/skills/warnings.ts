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
const SHELL_FENCE = /^\s*(```|~~~)\s*(bash|sh|shell|zsh|console|powershell|pwsh|ps1|cmd|bat|fish)\b/gim;
const PIPE_TO_SHELL =
  /\b(curl|wget|iwr|invoke-webrequest)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da|fi)?sh\b|\|\s*iex\b/gi;
// Claude Code runs `!`command`` lines in a skill before the model sees them.
const DYNAMIC_COMMAND = /!`[^`\n]+`/g;

export interface FileForWarnings {
  path: string;
  /** Git file mode from the tree: 100755 marks an executable. */
  mode?: string;
}

function few(items: string[]): string[] {
  return items.slice(0, 5).map((item) => item.slice(0, 120));
}

function matches(body: string, pattern: RegExp): string[] {
  return [...body.matchAll(pattern)].map((match) => match[0]);
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
    `${unsafe.length} file name(s) contain "..", "\\", ":" or control characters, which would place them outside the folder on some systems; they are not delivered.`,
  );
  warn(
    'ALLOWED_TOOLS',
    allowedTools,
    `The skill asks for pre-approved tools (allowed-tools): ${allowedTools.join(' ').slice(0, 200)}. An agent honouring it runs these without asking.`,
  );
  const fences = matches(body, SHELL_FENCE).map((fence) => fence.trim());
  warn(
    'SHELL_SNIPPETS',
    fences,
    `The instructions contain ${fences.length} shell code block(s) an agent may be told to run.`,
  );
  warn(
    'PIPE_TO_SHELL',
    matches(body, PIPE_TO_SHELL),
    'The instructions pipe a download straight into a shell: that runs code nobody has read.',
  );
  warn(
    'DYNAMIC_COMMAND',
    matches(body, DYNAMIC_COMMAND),
    'The instructions contain !`command` lines, which some agents run before reading the skill.',
  );
  return warnings;
}
