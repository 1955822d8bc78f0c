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
    | 'DYNAMIC_COMMAND';
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

export function safetyWarnings(
  body: string,
  allowedTools: string[],
  files: FileForWarnings[],
): SafetyWarning[] {
  const warnings: SafetyWarning[] = [];
  const scripts = files.filter(
    (file) => file.path.split('/').includes('scripts') || SCRIPT_EXTENSIONS.test(file.path),
  );
  if (scripts.length > 0) {
    warnings.push({
      code: 'SCRIPTS_PRESENT',
      message: `${scripts.length} file(s) are scripts or programs. Read them before letting an agent run them; this gateway never runs them.`,
      examples: few(scripts.map((file) => file.path)),
    });
  }
  const executables = files.filter((file) => file.mode === '100755');
  if (executables.length > 0) {
    warnings.push({
      code: 'EXECUTABLE_FILES',
      message: `${executables.length} file(s) are marked executable in git.`,
      examples: few(executables.map((file) => file.path)),
    });
  }
  if (allowedTools.length > 0) {
    warnings.push({
      code: 'ALLOWED_TOOLS',
      message: `The skill asks for pre-approved tools (allowed-tools): ${allowedTools.join(' ').slice(0, 200)}. An agent honouring it runs these without asking.`,
      examples: few(allowedTools),
    });
  }
  const fences = [...body.matchAll(SHELL_FENCE)].map((match) => match[0].trim());
  if (fences.length > 0) {
    warnings.push({
      code: 'SHELL_SNIPPETS',
      message: `The instructions contain ${fences.length} shell code block(s) an agent may be told to run.`,
      examples: few(fences),
    });
  }
  const pipes = [...body.matchAll(PIPE_TO_SHELL)].map((match) => match[0]);
  if (pipes.length > 0) {
    warnings.push({
      code: 'PIPE_TO_SHELL',
      message: 'The instructions pipe a download straight into a shell: that runs code nobody has read.',
      examples: few(pipes),
    });
  }
  const dynamic = [...body.matchAll(DYNAMIC_COMMAND)].map((match) => match[0]);
  if (dynamic.length > 0) {
    warnings.push({
      code: 'DYNAMIC_COMMAND',
      message: 'The instructions contain !`command` lines, which some agents run before reading the skill.',
      examples: few(dynamic),
    });
  }
  return warnings;
}
