// Text from a log (file names, roll-outs, answers, notices quoting them) made safe to print on a
// terminal or in a notice: no control character reaches the output raw. C0 controls and DEL
// become their visible Control Pictures (ESC → ␛, so an OSC window-title or SGR colour sequence
// prints as inert text), C1 controls (U+0080–U+009F; U+009B is a one-character CSI) and the bidi
// and zero-width format controls (U+202E would show "12" as "21") and the line and paragraph
// separators (U+2028, U+2029) become `<U+XXXX>`. This is the one mapping of log text to what is
// displayed: the CLI's text output and notices, and the extension's labels, tooltips, pickers and
// roll-out document headers (src/extension/format.ts) all go through it.

const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2069\ufeff]/g;
const UNSAFE_ONE_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2069\ufeff]/g;

function visible(c: string): string {
  const code = c.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/**
 * `s` with every control character neutralised (module header). Newlines and tabs are kept when
 * `multiline` (a report's table), otherwise shown as ␊ and ␉ (a one-line notice).
 */
export function safeText(s: string, multiline = false): string {
  const re = multiline ? UNSAFE : UNSAFE_ONE_LINE;
  re.lastIndex = 0;
  return re.test(s) ? s.replace(re, visible) : s;
}
